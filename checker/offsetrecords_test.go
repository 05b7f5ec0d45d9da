package checker_test

import (
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// offsetRecords is replica 1's partition group testGroup built on slot 1
// with the records it recovered, and its durable image.
type offsetRecords struct {
	*partitionHistory
	img *fakeImages
}

func newOffsetRecords(t *testing.T, recovered ...wire.OffsetEntry) *offsetRecords {
	o := &offsetRecords{partitionHistory: newPartitionHistory(t), img: newFakeImages(3)}
	o.c.SetArtifacts(o.img)
	o.event(replica.EventOffsetsRecovered, replica.DiskReport{Slot: 1, Offsets: recovered})
	return o
}

func (o *offsetRecords) event(kind replica.EventKind, d replica.DiskReport) {
	o.c.Replica(o.tick(), replica.Event{Kind: kind, Replica: 1, PartitionGroup: testGroup, Disk: d})
}

// write reports a write of consumer's offset asked for, durable is its
// done.
func (o *offsetRecords) write(consumer uint32, offset uint64, deleted bool) {
	o.event(replica.EventOffsetWrite, replica.DiskReport{Slot: 1, Consumer: consumer, Offset: offset, Deleted: deleted, Recorded: true})
}

func (o *offsetRecords) durable(consumer uint32, offset uint64, deleted bool) {
	o.event(replica.EventOffsetDurable, replica.DiskReport{Slot: 1, Consumer: consumer, Offset: offset, Deleted: deleted, Recorded: true})
}

// TestOffsetDurable: a write the records report durable must be what the
// records hold by the format (issue 26: offsetstore.go:28, a record a byte
// short, and :158, the flags a byte late, wrote records no reader of the
// format takes), or a write of the consumer asked for after it; a fault on
// the record excuses it.
func TestOffsetDurable(t *testing.T) {
	o := newOffsetRecords(t)
	o.write(7, 5, false)
	o.img.offsetRecord(1, 1, 0, 1, testGroup, 7, 5, false, 1)
	o.durable(7, 5, false)
	o.write(7, 6, false)
	o.write(7, 9, false) // coalesced: both dones run once 9 is durable
	o.img.offsetRecord(1, 1, 0, 0, testGroup, 7, 9, false, 2)
	o.durable(7, 6, false)
	o.durable(7, 9, false)
	o.write(7, 0, true)
	o.img.offsetRecord(1, 1, 0, 1, testGroup, 7, 0, true, 3)
	o.durable(7, 0, true)
	o.want("")

	o = newOffsetRecords(t)
	o.write(7, 5, false)
	o.img.offsetRecord(1, 1, 0, 1, testGroup, 7, 4, false, 1) // an older value
	o.durable(7, 5, false)
	o.want(checker.OffsetNotDurable)

	o = newOffsetRecords(t)
	o.write(7, 0, true)
	o.img.offsetRecord(1, 1, 0, 1, testGroup, 7, 0, true, 1)
	o.img.sectors[1][imgOffsetsFirst+16+1][21] = 1 // the deleted flag a byte late: the hash no longer verifies
	o.durable(7, 0, true)
	o.want(checker.OffsetNotDurable)

	o = newOffsetRecords(t)
	o.write(7, 5, false)
	o.img.faulted[1][imgOffsetsFirst+16+1] = true // record 0 of slot 1, copy 1
	o.durable(7, 5, false)
	o.want("")
}

// TestOffsetsMisreadAtRecovery: a group's build recovers what its records
// hold (issue 26: offsetstore.go:146, the deleted flag read negated), with
// the records torn and corrupt as the checker counts them.
func TestOffsetsMisreadAtRecovery(t *testing.T) {
	setup := func(o *offsetRecords) {
		o.img.offsetRecord(1, 1, 0, 1, testGroup, 7, 5, false, 1)
		o.img.offsetRecord(1, 1, 1, 1, testGroup, 8, 0, true, 1)
		o.img.offsetRecord(1, 1, 2, 1, testGroup+1, 9, 3, false, 1) // another group's
	}
	for _, tc := range []struct {
		name      string
		recovered []wire.OffsetEntry
		torn      int
		fault     bool
		want      string
		twice     bool // record 3 holds a misdirected copy of consumer 7 beside record 0's
	}{
		{"as held", []wire.OffsetEntry{{ID: 7, Offset: 5}}, 0, false, "", false},
		{"a deleted one recovered", []wire.OffsetEntry{{ID: 7, Offset: 5}, {ID: 8}}, 0, false, checker.OffsetsMisread, false},
		{"a held one lost", nil, 0, false, checker.OffsetsMisread, false},
		{"another group's taken", []wire.OffsetEntry{{ID: 7, Offset: 5}, {ID: 9, Offset: 3}}, 0, false, checker.OffsetsMisread, false},
		{"a torn record nobody tore", []wire.OffsetEntry{{ID: 7, Offset: 5}}, 1, false, checker.OffsetsMisread, false},
		{"a faulted record may read otherwise", []wire.OffsetEntry{{ID: 7, Offset: 5}, {ID: 8, Offset: 1}}, 1, true, "", false},
		{"a faulted second record of a consumer read", []wire.OffsetEntry{{ID: 7, Offset: 6}}, 1, true, "", true},
		{"a value no record holds", []wire.OffsetEntry{{ID: 7, Offset: 4}}, 1, true, checker.OffsetsMisread, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &offsetRecords{partitionHistory: newPartitionHistory(t), img: newFakeImages(3)}
			o.c.SetArtifacts(o.img)
			setup(o)
			o.img.faulted[1][imgOffsetsFirst+18] = tc.fault // record 1 of slot 1, copy 0
			if tc.twice {
				o.img.offsetRecord(1, 1, 3, 0, testGroup, 7, 6, false, 2)
				o.img.faulted[1][imgOffsetsFirst+22] = tc.fault // record 3 of slot 1, copy 0
			}
			o.event(replica.EventOffsetsRecovered, replica.DiskReport{Slot: 1, Offsets: tc.recovered, Torn: tc.torn})
			o.want(tc.want)
		})
	}
}

// TestOffsetRecordsAfterAnInstall: after an install, the offsets the plane
// asked its records to hold are the installed ones (issue 26: install.go:96,
// which deleted the record of every consumer the install kept).
func TestOffsetRecordsAfterAnInstall(t *testing.T) {
	f := newInstallFixture(t)
	img := newFakeImages(3)
	f.c.SetArtifacts(img)
	event := func(kind replica.EventKind, d replica.DiskReport) {
		f.c.Replica(f.tick(), replica.Event{Kind: kind, Replica: 2, PartitionGroup: testGroup, Disk: d})
	}
	img.offsetRecord(2, 0, 0, 1, testGroup, 2, 2, false, 1)
	event(replica.EventOffsetsRecovered, replica.DiskReport{Slot: 0, Offsets: []wire.OffsetEntry{{ID: 2, Offset: 2}}})
	event(replica.EventOffsetWrite, replica.DiskReport{Consumer: 3, Recorded: true})
	f.installState(2, 6) // consumers 2 at 2, 3 at 0
	f.want("")

	f = newInstallFixture(t)
	img = newFakeImages(3)
	f.c.SetArtifacts(img)
	img.offsetRecord(2, 0, 0, 1, testGroup, 2, 2, false, 1)
	event(replica.EventOffsetsRecovered, replica.DiskReport{Slot: 0, Offsets: []wire.OffsetEntry{{ID: 2, Offset: 2}}})
	event(replica.EventOffsetWrite, replica.DiskReport{Consumer: 2, Deleted: true, Recorded: true})
	event(replica.EventOffsetWrite, replica.DiskReport{Consumer: 3, Recorded: true})
	f.installState(2, 6)
	f.want(checker.OffsetRecordsDiverged)
}
