// Package kernel is the deterministic core of the simulation: one event loop
// over virtual time, seeded PRNG streams, per-node clocks and tickers, and a
// digest over everything the loop processes, so that one seed reproduces one
// run byte for byte (../shared/DESIGN.md, "Determinism rules").
//
// It is a leaf: the network, the storage devices and the cluster harness are
// all driven by it, and the packages those are built on can test themselves
// on a real loop without importing the harness.
//
// Everything runs on the caller's goroutine. Components schedule their own
// long-lived objects as events, so the steady state allocates nothing per
// event.
package kernel
