package kernel

import (
	"encoding/binary"
	"fmt"

	"github.com/zeebo/xxh3"
)

// Event is something the loop runs at a virtual time. Components implement it
// on long-lived objects (a connection, a device, a ticker) so that scheduling
// allocates nothing; arg tells the object which of its firings this is (a
// generation number, an index), so a firing it no longer wants is recognised
// and ignored.
//
// Fire runs the event at virtual time nowNs and reports what happened: kind
// is a static label ("network.deliver", "storage.write"), node where it
// happened (or -1), hash a hash of its content (frame bytes, I/O bytes). An
// empty kind means nothing observable happened (a stale timer) and leaves the
// digest alone.
//
// Event is an alias of an interface literal, not a named type, so that the
// network and storage rooms, which sim imports and which must not import sim,
// can declare the very same type (an alias of the same literal) in the
// Scheduler interfaces they need, and *Loop satisfies those interfaces as is.
type Event = interface {
	Fire(nowNs int64, arg uint64) (kind string, node int32, hash uint64)
}

// TraceEntry is one processed event as the loop records it.
type TraceEntry struct {
	AtNs int64
	Seq  uint64
	Kind string
	Node int32
	Hash uint64 // the event's own hash: what it folded into the digest
}

func (e TraceEntry) String() string {
	return fmt.Sprintf("event %d at %dns: %s node %d hash %016x", e.Seq, e.AtNs, e.Kind, e.Node, e.Hash)
}

// Loop is the event loop: virtual time in nanoseconds, events ordered by
// (time, sequence number of scheduling), one goroutine.
type Loop struct {
	nowNs     int64
	seq       uint64
	queue     []scheduled // a binary min-heap on (atNs, seq)
	processed uint64
	digest    xxh3.Hasher
	recording bool
	trace     []TraceEntry
	scratch   [28]byte
	ticks     *tickFanout // the tickers' shared event, made with the first
	kinds     []kindEntry // kindHash's memory, most recently added last
}

type scheduled struct {
	atNs int64
	seq  uint64
	ev   Event
	arg  uint64
}

// NewLoop returns a loop at virtual time 0 with nothing scheduled.
func NewLoop() *Loop { return &Loop{} }

// Now returns the virtual time in nanoseconds.
func (l *Loop) Now() int64 { return l.nowNs }

// Processed returns how many events have fired.
func (l *Loop) Processed() uint64 { return l.processed }

// Pending returns how many events are scheduled.
func (l *Loop) Pending() int { return len(l.queue) }

// At schedules ev to fire at atNs, which must not be in the past. Events at
// one time fire in the order they were scheduled.
func (l *Loop) At(atNs int64, ev Event, arg uint64) {
	if atNs < l.nowNs {
		panic(fmt.Sprintf("kernel: event scheduled at %dns, before now %dns", atNs, l.nowNs))
	}
	if ev == nil {
		panic("kernel: nil event")
	}
	l.seq++
	l.queue = append(l.queue, scheduled{atNs: atNs, seq: l.seq, ev: ev, arg: arg})
	l.up(len(l.queue) - 1)
}

// After schedules ev to fire delayNs (>= 0) from now.
func (l *Loop) After(delayNs int64, ev Event, arg uint64) {
	if delayNs < 0 {
		panic(fmt.Sprintf("kernel: negative delay %dns", delayNs))
	}
	l.At(l.nowNs+delayNs, ev, arg)
}

// NextAt returns the time of the earliest scheduled event, and false when
// nothing is scheduled.
func (l *Loop) NextAt() (int64, bool) {
	if len(l.queue) == 0 {
		return 0, false
	}
	return l.queue[0].atNs, true
}

// Step fires the earliest event, advancing virtual time to it. It returns
// false when nothing is scheduled.
func (l *Loop) Step() bool {
	if len(l.queue) == 0 {
		return false
	}
	next := l.queue[0]
	last := len(l.queue) - 1
	l.queue[0] = l.queue[last]
	l.queue[last] = scheduled{}
	l.queue = l.queue[:last]
	if last > 0 {
		l.down(0)
	}
	if next.atNs < l.nowNs {
		panic("kernel: event queue went back in time")
	}
	l.nowNs = next.atNs
	kind, node, hash := next.ev.Fire(l.nowNs, next.arg)
	l.processed++
	if kind != "" {
		l.fold(next.atNs, next.seq, kind, node, hash)
	}
	return true
}

// RunUntil fires every event at or before limitNs, then sets the time to
// limitNs. eventsMax bounds the number fired (0: no bound); it returns false
// if the bound stopped it first.
func (l *Loop) RunUntil(limitNs int64, eventsMax uint64) bool {
	if limitNs < l.nowNs {
		panic(fmt.Sprintf("kernel: RunUntil %dns, before now %dns", limitNs, l.nowNs))
	}
	for fired := uint64(0); len(l.queue) > 0 && l.queue[0].atNs <= limitNs; fired++ {
		if eventsMax != 0 && fired == eventsMax {
			return false
		}
		l.Step()
	}
	l.nowNs = limitNs
	return true
}

// fold adds one event to the digest, and to the trace when recording.
func (l *Loop) fold(atNs int64, seq uint64, kind string, node int32, hash uint64) {
	b := l.scratch[:]
	binary.LittleEndian.PutUint64(b[0:], uint64(atNs))
	binary.LittleEndian.PutUint32(b[8:], uint32(node))
	binary.LittleEndian.PutUint64(b[12:], hash)
	binary.LittleEndian.PutUint64(b[20:], l.kindHash(kind))
	l.digest.Write(b)
	if l.recording {
		l.trace = append(l.trace, TraceEntry{AtNs: atNs, Seq: seq, Kind: kind, Node: node, Hash: xxh3.Hash(b)})
	}
}

// kindHash returns XXH3 of an event's kind, remembered: kinds are a few
// static labels, and hashing one at every event cost a measurable share of
// a run. The lookup compares strings, so a kind built at run time is never
// mistaken for another.
func (l *Loop) kindHash(kind string) uint64 {
	for i := range l.kinds {
		if l.kinds[i].kind == kind {
			return l.kinds[i].hash
		}
	}
	h := xxh3.HashString(kind)
	if len(l.kinds) < kindsMax {
		l.kinds = append(l.kinds, kindEntry{kind, h})
	}
	return h
}

// kindsMax bounds the kinds a loop remembers (a run has a few dozen).
const kindsMax = 64

type kindEntry struct {
	kind string
	hash uint64
}

// Digest returns the run digest so far: XXH3 over every observable event in
// the order processed (time, node, kind, content hash).
func (l *Loop) Digest() uint64 { return l.digest.Sum64() }

// FoldDigest adds a fact that is not an event (a commit the checker saw, a
// final state) to the digest, as the harness needs.
func (l *Loop) FoldDigest(kind string, node int32, hash uint64) {
	l.fold(l.nowNs, 0, kind, node, hash)
}

// RecordTrace turns recording of per-event hashes on or off.
func (l *Loop) RecordTrace(on bool) { l.recording = on }

// Trace returns the recorded events.
func (l *Loop) Trace() []TraceEntry { return l.trace }

// FirstDivergence returns the index of the first entry where two traces of
// one seed differ, or -1 if they are identical. A trace that is a strict
// prefix of the other diverges at its length.
func FirstDivergence(a, b []TraceEntry) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i].AtNs != b[i].AtNs || a[i].Kind != b[i].Kind || a[i].Node != b[i].Node || a[i].Hash != b[i].Hash {
			return i
		}
	}
	if len(a) != len(b) {
		return n
	}
	return -1
}

// DescribeDivergence names the first event where two traces of one seed
// differ, for a failure message, or returns "" if they are identical. When
// one trace is a prefix of the other, the shorter side reads "end of trace",
// so a caller never has to index past either.
func DescribeDivergence(a, b []TraceEntry) string {
	i := FirstDivergence(a, b)
	if i < 0 {
		return ""
	}
	at := func(t []TraceEntry) string {
		if i < len(t) {
			return t[i].String()
		}
		return fmt.Sprintf("end of trace (%d events)", len(t))
	}
	return fmt.Sprintf("first divergence at event %d: %s vs %s", i, at(a), at(b))
}

func (l *Loop) less(i, j int) bool {
	a, b := &l.queue[i], &l.queue[j]
	return a.atNs < b.atNs || a.atNs == b.atNs && a.seq < b.seq
}

func (l *Loop) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !l.less(i, parent) {
			return
		}
		l.queue[i], l.queue[parent] = l.queue[parent], l.queue[i]
		i = parent
	}
}

func (l *Loop) down(i int) {
	n := len(l.queue)
	for {
		smallest := i
		if left := 2*i + 1; left < n && l.less(left, smallest) {
			smallest = left
		}
		if right := 2*i + 2; right < n && l.less(right, smallest) {
			smallest = right
		}
		if smallest == i {
			return
		}
		l.queue[i], l.queue[smallest] = l.queue[smallest], l.queue[i]
		i = smallest
	}
}
