package sim

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// AgreementChecker checks, at every commit of every replica, that the
// metadata plane has one canonical history: every replica commits op k+1
// right after op k (per incarnation: a restarted replica replays from op 1),
// the prepare at op k has the same identity everywhere, it chains to op k-1
// by its parent, and nothing committed is ever replaced. It also holds a
// replica to the view it sent messages in across restarts. The full checker
// of the VOPR (linearizability, exactly-once) builds on it.
type AgreementChecker struct {
	canon     []wire.Header // canon[k-1] is op k's committed header
	next      []uint64      // per replica: the op it must commit next
	sentView  []uint32      // per replica: the highest view it sent a message in
	restarted []bool        // per replica: crashed since its last status event
	// Violation is the first violation found, or "" (the harness panics on
	// it at once, so a failing seed stops where it broke).
	Violation string
}

// NewAgreementChecker returns a checker for n replicas.
func NewAgreementChecker(n int) *AgreementChecker {
	c := &AgreementChecker{next: make([]uint64, n), sentView: make([]uint32, n), restarted: make([]bool, n)}
	for i := range c.next {
		c.next[i] = 1
	}
	return c
}

// Committed returns the highest op committed anywhere.
func (c *AgreementChecker) Committed() uint64 { return uint64(len(c.canon)) }

// Header returns the committed header of op.
func (c *AgreementChecker) Header(op uint64) (wire.Header, bool) {
	if op == 0 || op > uint64(len(c.canon)) {
		return wire.Header{}, false
	}
	return c.canon[op-1], true
}

// Crashed tells the checker a replica's process died: its next commits
// replay the log from op 1.
func (c *AgreementChecker) Crashed(r uint8) {
	c.next[r] = 1
	c.restarted[r] = true
}

func (c *AgreementChecker) fail(format string, args ...any) {
	if c.Violation == "" {
		c.Violation = fmt.Sprintf(format, args...)
	}
	panic("correctness: " + c.Violation)
}

// Event checks one replica event.
func (c *AgreementChecker) Event(nowNs int64, e replica.Event) {
	if e.Kind != replica.EventGroup || e.Group.Group != wire.MetadataGroup {
		return
	}
	g := e.Group
	r := e.Replica
	switch g.Kind {
	case vsr.EventCommitted:
		var p wire.PrepareHeader
		p.Decode(&g.Header)
		if p.Op != c.next[r] {
			c.fail("replica %d committed op %d, expected op %d next (gap or repeat)", r, p.Op, c.next[r])
		}
		if p.Op > 1 {
			prev := c.canon[p.Op-2]
			if p.Parent != prev.Checksum() {
				c.fail("replica %d: op %d (parent %s) breaks the hash chain from op %d (%s)", r, p.Op, p.Parent, p.Op-1, prev.Checksum())
			}
		}
		if p.Op <= uint64(len(c.canon)) {
			if want := c.canon[p.Op-1].Checksum(); want != p.Checksum {
				c.fail("replica %d committed op %d as %s, but %s was committed there before (committed op replaced)", r, p.Op, p.Checksum, want)
			}
		} else {
			if p.Op > 1 {
				var prev wire.PrepareHeader
				prev.Decode(&c.canon[p.Op-2])
				if p.Timestamp <= prev.Timestamp {
					c.fail("op %d timestamp %d does not exceed op %d's %d", p.Op, p.Timestamp, p.Op-1, prev.Timestamp)
				}
			}
			c.canon = append(c.canon, g.Header)
		}
		c.next[r] = p.Op + 1
	case vsr.EventSent:
		c.sentView[r] = max(c.sentView[r], g.View)
	case vsr.EventStatus:
		if c.restarted[r] {
			c.restarted[r] = false
			if g.View < c.sentView[r] {
				c.fail("replica %d restarted in view %d after sending messages in view %d", r, g.View, c.sentView[r])
			}
		}
	}
}
