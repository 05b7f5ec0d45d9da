// Package storage owns the block-device vocabulary the replica is written
// against (Device, ErrReadFault) and the simulated device the cluster harness
// puts under each replica, with the storage fault model of DESIGN.md
// ("Faults"): unsynced writes lost, kept or torn at a crash; latent read
// errors; silent corruption; misdirected writes; all but crash tears bounded
// by a cluster-wide fault Atlas so that every chunk of data keeps a clean copy
// on a replication quorum.
//
// The package has two halves. device.go is the interface half: it carries no
// simulation detail, because the replica imports this package for Device
// alone, so that the same replica can later run over a real file. Everything
// else (Layout, Atlas, SimDevice) is the simulation half. It is driven by the
// harness's event loop through the Scheduler and Streams interfaces declared
// in sched.go, since storage must not import sim (sim imports storage).
//
// Determinism: the simulated device never starts a goroutine, never reads a
// clock, draws randomness only from the per-site generators handed in, and
// never lets map iteration order reach anything observable. Every completion
// is its own loop event.
package storage
