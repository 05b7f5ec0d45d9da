package storage

import "math/rand/v2"

// Event is the event loop's event type. It is an alias of the same interface
// literal as kernel.Event, so that *kernel.Loop satisfies Scheduler without storage
// importing sim. Fire runs the event at virtual time nowNs; arg tells the
// object which of its firings this is. It reports what happened for the run
// digest: a static kind label, the node, and a hash of the content; an empty
// kind means nothing observable happened (a stale firing).
type Event = interface {
	Fire(nowNs int64, arg uint64) (kind string, node int32, hash uint64)
}

// Scheduler is the part of the event loop the simulated device needs:
// virtual time in nanoseconds, and scheduling an event at a time not in the
// past. Events at one time fire in the order they were scheduled.
type Scheduler interface {
	Now() int64
	At(atNs int64, ev Event, arg uint64)
}

// Streams hands out one independent seeded generator per label (kernel.Streams
// implements it). The device asks for one stream per fault site, once, at
// creation, so that adding a site or drawing more at one never shifts the
// draws of another.
type Streams interface {
	Stream(label string) *rand.Rand
}
