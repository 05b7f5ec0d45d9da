// Package mutants measures the VOPR's own bug-finding power (issue 26): it
// generates one-operator mutants of the replica's non-test code with Go's
// own parser, builds each with `go build -overlay` (the tree is never
// touched), and runs each against two oracles: a VOPR campaign of a fixed
// set of seeds and the mutated package's unit tests. The headline figure is
// the VOPR's recall, the share of the mutants the unit tests prove change
// behaviour that the VOPR kills too; the second is the share of the VOPR's
// kills that a named checker violation made, not a replica panic, an
// undiagnosed stall or a hang.
//
// The operators (Operator) are those of mutation testing's classic set:
// a relational bound moved (< for <=), a comparison negated (== for !=,
// < for >=), && and || swapped, an integer constant off by one, a
// statement dropped (a call, an assignment, an early return) and a branch
// condition negated. Sites are found by walking the AST; a mutant replaces
// one span of the file's bytes, so the rest of the file is the same and
// the line before and after read as a diff.
//
// Some sites are never drawn (Generate's rules, each counted by name):
// the canary switches and what only a canary runs (package canary/bug and
// the canary.go helpers), and the conditions of assertions, since on a
// correct replica an assertion never fires and its mutants only make it
// fire always (a panic every oracle sees) or never (nothing a user sees).
// Sites judged by hand to be unable to change what a user of Iggy sees
// are listed with a reason in an exclusion file (Exclusions).
//
// The sample is deterministic: Sample draws n of the sites from a seed,
// spread over the packages in proportion to their sites. Running is not
// (it is wall-clock bound), but each oracle's verdict is: the campaign's
// seeds and the unit tests are deterministic, and a run killed by its wall
// budget is reported as a timeout, apart from the other verdicts.
package mutants
