package checker

import (
	"fmt"
	"maps"
	"slices"

	"github.com/iggy-vopr/vopr/checker/diskread"
	"github.com/iggy-vopr/vopr/replica"
)

// The consumer offset records (docs/disk-format.md 14.2, DEVIATIONS.md
// 52), read from each replica's durable image by checker/diskread. Every
// offset a partition plane applies (a committed store or delete, a NoAck
// one on the primary, an installed state) is written to the consumer's
// record; a restarted replica seeds its plane from the records. The
// promises, each checked where it is made:
//
//   - a write the records report durable (EventOffsetDurable) is what a
//     restart now would read of the consumer: that value, or one asked for
//     after it (writes of a record coalesce into the newest) ("consumer
//     offset not durable");
//   - after an install, the offsets the plane asked its records to hold
//     are the installed state's (ICO1, read by the checker's own reader):
//     a restart would otherwise seed the plane with other offsets than the
//     ones it served ("offset records differ from the plane");
//   - a group's build recovers from the records exactly what the checker
//     reads in them: the same offsets, and the same records found torn and
//     corrupt ("consumer offsets misread at recovery").
//
// A record one of whose copies a fault touched (a latent error,
// corruption, a misdirected write) is not judged: the replica may read it
// otherwise, or its write may not have landed.

// Names of the offset records' violations.
const (
	OffsetNotDurable      = "consumer offset not durable"          // a write reported durable that the records a restart reads do not hold
	OffsetRecordsDiverged = "offset records differ from the plane" // the offsets a plane asked its records to hold are not the state it installed
	OffsetsMisread        = "consumer offsets misread at recovery" // a group's build recovered other offsets than its records hold
)

// offsetIntent is a value a replica asked a consumer's record to hold.
type offsetIntent struct {
	offset  uint64
	deleted bool
}

func (v offsetIntent) String() string {
	if v.deleted {
		return "deleted"
	}
	return fmt.Sprintf("offset %d", v.offset)
}

// same reports whether two values are the same record state (a deleted
// record's offset means nothing).
func (v offsetIntent) same(w offsetIntent) bool {
	return v.deleted == w.deleted && (v.deleted || v.offset == w.offset)
}

// groupRecords is what one replica asked of one group's records since the
// group was built (looked up only).
type groupRecords struct {
	slot int
	// intended: per consumer, the newest value asked for (or recovered);
	// pending: per consumer, the values asked for since the last one
	// reported durable, oldest first; unrecorded: consumers kept in memory
	// only (the records were full).
	intended   map[uint32]offsetIntent
	pending    map[uint32][]offsetIntent
	unrecorded map[uint32]bool
}

// recordsKey names one replica's records of one group.
type recordsKey struct {
	replica uint8
	group   uint64
}

// offsetEvent takes the offset records' events.
func (c *Checker) offsetEvent(e replica.Event) {
	if c.art.src == nil || c.violation != nil {
		return
	}
	k := recordsKey{e.Replica, e.PartitionGroup}
	d := e.Disk
	switch e.Kind {
	case replica.EventOffsetsRecovered:
		c.offsetsRecovered(e.Replica, e.PartitionGroup, d)
		g := &groupRecords{slot: d.Slot, intended: map[uint32]offsetIntent{}, pending: map[uint32][]offsetIntent{},
			unrecorded: map[uint32]bool{}}
		for _, o := range d.Offsets {
			g.intended[o.ID] = offsetIntent{offset: o.Offset}
		}
		c.art.records[k] = g
	case replica.EventOffsetWrite:
		g := c.art.records[k]
		if g == nil {
			return
		}
		if !d.Recorded {
			g.unrecorded[d.Consumer] = true
			return
		}
		v := offsetIntent{offset: d.Offset, deleted: d.Deleted}
		g.intended[d.Consumer] = v
		g.pending[d.Consumer] = append(g.pending[d.Consumer], v)
	case replica.EventOffsetDurable:
		if g := c.art.records[k]; g != nil {
			c.offsetDurable(e.Replica, e.PartitionGroup, g, d.Consumer, offsetIntent{offset: d.Offset, deleted: d.Deleted})
		}
	}
}

// offsetDurable checks a write of consumer's record reported durable.
func (c *Checker) offsetDurable(r uint8, group uint64, g *groupRecords, consumer uint32, v offsetIntent) {
	pending := g.pending[consumer]
	at := slices.IndexFunc(pending, v.same)
	if at >= 0 {
		g.pending[consumer] = pending[at+1:]
	}
	z := c.art.src.OffsetZone()
	recs := diskread.ReadOffsetRecords(z, c.art.src.Peek(r), g.slot, group)
	for _, rec := range recs {
		if c.art.src.Faulted(r, rec.First, 2) {
			return // it may be this consumer's record
		}
	}
	var held *diskread.OffsetRecord
	for i := range recs {
		if recs[i].Held && recs[i].Copy.Consumer == consumer {
			held = &recs[i]
		}
	}
	if held != nil {
		got := offsetIntent{offset: held.Copy.Offset, deleted: held.Copy.Deleted}
		if got.same(v) || at >= 0 && slices.ContainsFunc(pending[at+1:], got.same) {
			return
		}
		c.fail(Violation{Name: OffsetNotDurable, Replicas: []uint8{r},
			Detail: fmt.Sprintf("replica %d's records report consumer %d's %s durable in partition group %d (slot %d), but a restart now would read %s there (sequence %d)",
				r, consumer, v, group, g.slot, got, held.Copy.Sequence)})
		return
	}
	c.fail(Violation{Name: OffsetNotDurable, Replicas: []uint8{r},
		Detail: fmt.Sprintf("replica %d's records report consumer %d's %s durable in partition group %d (slot %d), but no record there holds that consumer by the format (%s)",
			r, consumer, v, group, g.slot, describeOffsetRecords(recs))})
}

// offsetsInstalled checks, after r installed a partition state of group
// whose ICO1 is artifact, that the records were asked to hold it.
func (c *Checker) offsetsInstalled(r uint8, group uint64, artifact []byte) {
	g := c.art.records[recordsKey{r, group}]
	if c.art.src == nil || c.violation != nil || g == nil {
		return
	}
	got, err := readICO1(artifact)
	if err != nil {
		return // partitionInstalled names an artifact that does not read
	}
	installed := map[uint32]uint64{}
	for _, e := range got.consumers {
		installed[e.id] = e.offset
	}
	ids := slices.Sorted(maps.Keys(g.intended))
	for id := range installed {
		if _, ok := g.intended[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		if g.unrecorded[id] {
			continue
		}
		want, ok := installed[id]
		w := offsetIntent{offset: want, deleted: !ok}
		v, asked := g.intended[id]
		if !asked {
			v = offsetIntent{deleted: true} // never recorded: none
		}
		if !v.same(w) {
			c.fail(Violation{Name: OffsetRecordsDiverged, Replicas: []uint8{r},
				Detail: fmt.Sprintf("replica %d installed a state of partition group %d whose consumer %d is at %s, but the last it asked its records to hold for that consumer is %s: a restart would seed the plane with it",
					r, group, id, w, v)})
			return
		}
	}
}

// offsetsRecovered checks what a group's build recovered from slot's
// records against the checker's reading of them.
func (c *Checker) offsetsRecovered(r uint8, group uint64, d replica.DiskReport) {
	recs := diskread.ReadOffsetRecords(c.art.src.OffsetZone(), c.art.src.Peek(r), d.Slot, group)
	faulted := false
	want := map[uint32]uint64{}
	// mayRead: per consumer, what a faulted record holds for it. A
	// misdirected write can leave a consumer's copy in another record's
	// sector, so one consumer may be held twice; a replica that reads the
	// faulted one is excused (a long run of seed 1 under a first version
	// of the repair fix for seed 3115659328: replica 1 read consumer 3 from
	// record 2, which a fault had touched, and the check judged it by the
	// older value of record 0 alone).
	mayRead := map[uint32][]offsetIntent{}
	torn, corrupt := 0, 0
	for _, rec := range recs {
		if c.art.src.Faulted(r, rec.First, 2) {
			faulted = true
			if rec.Held {
				id := rec.Copy.Consumer
				mayRead[id] = append(mayRead[id], offsetIntent{offset: rec.Copy.Offset, deleted: rec.Copy.Deleted})
			}
			continue
		}
		if rec.Held && !rec.Copy.Deleted {
			want[rec.Copy.Consumer] = rec.Copy.Offset
		}
		torn += b2i(rec.Torn)
		corrupt += b2i(rec.Corrupt)
	}
	got := map[uint32]uint64{}
	for _, o := range d.Offsets {
		got[o.ID] = o.Offset
	}
	for _, id := range slices.Sorted(maps.Keys(want)) {
		if v, ok := got[id]; !ok || v != want[id] {
			if slices.ContainsFunc(mayRead[id], offsetIntent{offset: v, deleted: !ok}.same) {
				continue
			}
			c.fail(Violation{Name: OffsetsMisread, Replicas: []uint8{r},
				Detail: fmt.Sprintf("replica %d built partition group %d on slot %d and recovered consumer %d %s, but its records hold offset %d (%s)",
					r, group, d.Slot, id, recoveredAs(v, ok), want[id], describeOffsetRecords(recs))})
			return
		}
	}
	for _, o := range d.Offsets {
		if _, ok := want[o.ID]; !ok && !faulted {
			c.fail(Violation{Name: OffsetsMisread, Replicas: []uint8{r},
				Detail: fmt.Sprintf("replica %d built partition group %d on slot %d and recovered consumer %d at offset %d, but its records hold none for it (%s)",
					r, group, d.Slot, o.ID, o.Offset, describeOffsetRecords(recs))})
			return
		}
	}
	if !faulted && (torn != d.Torn || corrupt != d.Corrupt) {
		c.fail(Violation{Name: OffsetsMisread, Replicas: []uint8{r},
			Detail: fmt.Sprintf("replica %d built partition group %d on slot %d and found %d records torn and %d corrupt, but its records show %d torn and %d corrupt (%s)",
				r, group, d.Slot, d.Torn, d.Corrupt, torn, corrupt, describeOffsetRecords(recs))})
	}
}

func recoveredAs(v uint64, ok bool) string {
	if !ok {
		return "without an offset"
	}
	return fmt.Sprintf("at offset %d", v)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// describeOffsetRecords lists what each record holds, for a detail.
func describeOffsetRecords(recs [diskread.OffsetRecordsPerSlot]diskread.OffsetRecord) string {
	s := ""
	for i, rec := range recs {
		if i > 0 {
			s += "; "
		}
		switch {
		case rec.Held:
			s += fmt.Sprintf("record %d: consumer %d %s seq %d", i, rec.Copy.Consumer,
				offsetIntent{offset: rec.Copy.Offset, deleted: rec.Copy.Deleted}, rec.Copy.Sequence)
		case rec.Corrupt:
			s += fmt.Sprintf("record %d: corrupt", i)
		default:
			s += fmt.Sprintf("record %d: none", i)
		}
		if rec.Torn {
			s += " (torn)"
		}
	}
	return s
}

// offsetsCrashed forgets what r asked of its records: its restart
// recovers them again.
func (c *Checker) offsetsCrashed(r uint8) {
	for k := range c.art.records {
		if k.replica == r {
			delete(c.art.records, k)
		}
	}
}
