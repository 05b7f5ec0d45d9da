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
	// Intact reports whether frame's body is whole: a partition prepare's
	// identity covers its header alone (checksum_body is 0), so a body
	// corrupted on the wire passes every check of the header. Checked on
	// every prepare a replica journals other than through Admit (a repaired
	// one, a hole filled); false drops it, as a corrupt frame, and the
	// repair asks again.
	Intact(frame []byte) bool
}
