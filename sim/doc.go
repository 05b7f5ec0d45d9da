// Package sim is the deterministic world the replicas live in: one event loop
// over virtual time, seeded PRNG streams, per-node clocks, and a digest over
// everything the loop processes, so that one seed reproduces one run byte for
// byte (../shared/DESIGN.md, "Determinism rules").
//
// Everything runs on the caller's goroutine. Components (the network, the
// storage devices, the replicas' tickers) schedule their own long-lived
// objects as events, so the steady state allocates nothing per event.
package sim
