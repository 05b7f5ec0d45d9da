#!/bin/sh
# gentags.sh: regenerates tag_*.go from the tags that suite.go lists, so that
# the test binary knows which canary it was built with (Tag). Run it after
# adding a canary to Suite.
set -e
cd "$(dirname "$0")"
tags=$(sed -n 's/.*Tag:[[:space:]]*"\(canary_[a-z0-9_]*\)".*/\1/p' suite.go)
rm -f tag_*.go
none=""
for tag in $tags; do
	name=${tag#canary_}
	cat > tag_$name.go <<EOT
//go:build $tag

package canary

// Tag is the canary this build turns on.
const Tag = "$tag"
EOT
	none="$none${none:+ && }!$tag"
done
cat > tag_none.go <<EOT
//go:build $none

package canary

// Tag is the canary this build turns on: none.
const Tag = ""
EOT

# The switches: canary/bug holds one constant per deliberate bug (bugs.txt:
# tag and name, retired canaries included, whose tags stay), true only in
# a build with its tag.
cd bug
rm -f switch_*.go
while read -r tag name; do
	[ -n "$tag" ] || continue
	file=switch_${tag#canary_}
	cat > ${file}_on.go <<EOT
//go:build $tag

package bug

// $name is the switch of $tag (canary/README.md): on in this build.
const $name = true
EOT
	cat > ${file}_off.go <<EOT
//go:build !$tag

package bug

// $name is the switch of $tag (canary/README.md): off, as in every build
// without its tag.
const $name = false
EOT
done < bugs.txt
