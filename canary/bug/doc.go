// Package bug holds the canary suite's switches (canary/README.md): one
// constant per deliberate bug, true only in a build with its tag
// (go build -tags canary_commit_one_ack), false otherwise. The replica's
// packages hold only their `if bug.X` branches; the files here are
// generated from bugs.txt by canary/gentags.sh.
package bug
