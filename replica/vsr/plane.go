package vsr

import "github.com/iggy-vopr/vopr/replica/wire"

// Plane is what a partition plane adds to its group's normal operation
// (partition-plane.md, "Primary: admission and stamping" and "Backup"): the
// primary stamps each prepare's body at its journal append, and a backup
// checks that stamp before it journals the next prepare of its view. The
// metadata plane has none (Deps.Plane nil).
type Plane interface {
	// Stamp returns the body of the prepare the primary is building (p has
	// its op, parent and timestamp; body is the proposal's, which Stamp must
	// not change). false refuses it: the plane cannot stamp at this head
	// (a body below it is missing after a view change), and nothing is
	// prepared.
	Stamp(p *wire.PrepareHeader, body []byte) ([]byte, bool)
	// Admit reports whether a backup may journal frame, the next prepare of
	// its view on top of its head. false refuses it: no journal entry, no
	// forward, no acknowledgement.
	Admit(frame []byte) bool
}
