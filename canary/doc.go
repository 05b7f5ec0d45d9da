// Package canary is the fallback runner of the canary suite: deliberate bugs
// in the replica, each behind its own build tag, that a short VOPR campaign
// must catch (DESIGN.md, "Tests"). A checker that never fires proves nothing.
//
// Each canary is a package-level constant in the replica package it breaks,
// false without its tag (files canary_<name>_on.go and canary_<name>_off.go);
// the bug site reads `if canary<Name> { ... }`, so the normal build compiles
// the dead branch away.
//
//	go test -tags canary_<name> ./canary
//
// runs sim.Run(sim.Swarm(seed), nil) over seeds 1..4000 (-canary.seeds) and
// reports the first failing seed (seeds-to-catch) and its violation; it fails
// when the canary escapes, or is caught by something other than what it
// expects. Without a canary tag the test is skipped. run.sh loops over every
// tag; `make canary` does the same with the vopr command. README.md lists the
// canaries and their seeds-to-catch.
package canary
