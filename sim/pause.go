package sim

import (
	"github.com/iggy-vopr/vopr/storage"
)

// A paused replica (a VM migration, a long GC pause) neither ticks nor
// sees anything happen: network events and I/O completions wait until it
// resumes, then arrive in order. Time passes meanwhile, which is the point:
// its peers time it out, and it sees the jump when it wakes.

// Paused reports whether the replica is paused.
func (n *ReplicaNode) Paused() bool { return n.paused }

// Pause stops the process where it is.
func (n *ReplicaNode) Pause() {
	if !n.up || n.paused {
		return
	}
	n.paused = true
	if n.ticker != nil {
		n.ticker.Pause()
	}
}

// Resume lets the process go on: what it missed is delivered in order, as
// one step of the loop, then it ticks again.
func (n *ReplicaNode) Resume() {
	if !n.paused {
		return
	}
	n.paused = false
	n.c.Loop.After(0, resumeDrain{n}, uint64(n.incarnation))
	if n.ticker != nil && n.rep != nil {
		n.ticker.Resume()
	}
}

type resumeDrain struct{ n *ReplicaNode }

func (d resumeDrain) Fire(nowNs int64, incarnation uint64) (string, int32, uint64) {
	n := d.n
	if uint64(n.incarnation) != incarnation {
		return "", 0, 0
	}
	held := n.held
	n.held = nil
	for _, f := range held {
		if n.paused || uint64(n.incarnation) != incarnation {
			n.held = append(n.held, f) // paused again, or crashed: keep or drop below
			continue
		}
		f()
	}
	if uint64(n.incarnation) != incarnation {
		n.held = nil
	}
	return "sim.resume", int32(n.id), uint64(len(held))
}

// hold runs f now, or keeps it for Resume while the process is paused.
func (n *ReplicaNode) hold(f func()) {
	if n.paused {
		n.held = append(n.held, f)
		return
	}
	f()
}

// pausableDevice is the device the replica sees: completions wait while
// the process is paused, and never arrive to a later incarnation.
type pausableDevice struct {
	n   *ReplicaNode
	dev *storage.SimDevice
}

func (d pausableDevice) SectorSize() int { return d.dev.SectorSize() }
func (d pausableDevice) Sectors() uint64 { return d.dev.Sectors() }

func (d pausableDevice) wrap(done func(error)) func(error) {
	inc := d.n.incarnation
	return func(err error) {
		if d.n.incarnation != inc {
			return
		}
		d.n.hold(func() { done(err) })
	}
}

func (d pausableDevice) Read(sector uint64, buf []byte, done func(error)) {
	d.dev.Read(sector, buf, d.wrap(done))
}

func (d pausableDevice) Write(sector uint64, data []byte, done func(error)) {
	d.dev.Write(sector, data, d.wrap(done))
}

func (d pausableDevice) Sync(done func(error)) { d.dev.Sync(d.wrap(done)) }

func (d pausableDevice) ReadBatch(extents []storage.Extent, done func()) {
	wrapped := d.wrap(func(error) { done() })
	d.dev.ReadBatch(extents, func() { wrapped(nil) })
}

func (d pausableDevice) WriteBatch(extents []storage.Extent, done func(error)) {
	d.dev.WriteBatch(extents, d.wrap(done))
}
