package sim

import "io"

// Run runs one seed with its options: the safety phase, then (unless Lite)
// the liveness phase, and reports the result. With trace non-nil, every event
// is written to it as one JSON object per line. Run never panics: a panic
// inside replica code is a correctness failure, one inside the harness a
// simulator error.
func Run(o Options, trace io.Writer) Result {
	return runVOPR(o, trace, nil)
}

// Performance is the fixed, fault-free configuration of `vopr -performance`:
// six replicas, four clients, 512 requests, no faults, a pinned seed, so that
// its frames per committed op per command are a deterministic protocol-cost
// figure to track across changes.
func Performance() Options {
	o := Swarm(92)
	o.NoFaults()
	o.Replicas, o.Clients, o.Requests = 6, 4, 512
	o.DelayMinNs, o.DelayMeanNs = 500_000, 1_000_000
	o.Auth, o.RotationWindow = false, false
	return o
}
