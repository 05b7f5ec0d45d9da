package checker_test

import (
	"encoding/binary"
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/zeebo/xxh3"
)

// nackableReport is the report of a restart that recovered a formatted,
// never written journal of the fake images' 8 slots: head op 0, ops 1..7
// provably never acknowledged.
func nackableReport() replica.JournalReport {
	jr := replica.JournalReport{FirstOp: 1}
	for range 7 {
		jr.Knowledge = append(jr.Knowledge, "nackable")
	}
	return jr
}

// journalVerdict runs the check of one restart of replica 1 reporting jr
// on a formatted image that edit may change (faulted: the sectors the
// fault model touched).
func journalVerdict(t *testing.T, jr replica.JournalReport, edit func(f *fakeImages)) *checker.Violation {
	t.Helper()
	return journalVerdictAfter(t, jr, edit, func(c *checker.Checker) { c.Crashed(1) })
}

// journalVerdictAfter is journalVerdict with the history before the
// report: what history tells the checker of replica 1 (crashes, formats
// completed), on the formatted image before edit changes it.
func journalVerdictAfter(t *testing.T, jr replica.JournalReport, edit func(f *fakeImages), history func(c *checker.Checker)) *checker.Violation {
	t.Helper()
	f := newFakeImages(3)
	formatImage(t, f, 1)
	c := checker.New(3)
	c.SetArtifacts(f)
	history(c)
	if edit != nil {
		edit(f)
	}
	c.Replica(1000, replica.Event{Kind: replica.EventJournalRecovered, Replica: 1, Journal: jr})
	return c.Violation()
}

// TestJournalRecoveryFreshBoot: the boot right after a format completed
// is fresh, whatever crashes cut earlier formats (VOPR seeds 970678049
// and 2668062079 -logout 0.1: a replica crashed while formatting, was
// formatted again at its restart, and read a slot damaged at that first
// boot; its log rightly starts from head 0), and only that boot: a crash
// after the format completed makes the next boot a restart, whose head
// runs through the unknown op above head op 0.
func TestJournalRecoveryFreshBoot(t *testing.T) {
	damage := func(f *fakeImages) {
		_, prepare, _ := f.Geometry(1).SlotSectors(1)
		delete(f.sectors[1], prepare)
	}
	torn1 := nackableReport()
	torn1.Knowledge[0] = "unknown"
	torn1Head := torn1
	torn1Head.Head = 1
	formatCutThenFormatted := func(c *checker.Checker) {
		c.Crashed(1) // during its first format
		c.Crashed(1) // during the second, at the restart
		c.Formatted(900, 1)
	}
	formattedThenCrashed := func(c *checker.Checker) {
		c.Formatted(900, 1)
		c.Crashed(1)
	}
	for _, tc := range []struct {
		name    string
		jr      replica.JournalReport
		history func(c *checker.Checker)
		bad     bool
	}{
		{"fresh after crash-cut formats, head 0", torn1, formatCutThenFormatted, false},
		{"fresh after crash-cut formats, head through damage", torn1Head, formatCutThenFormatted, true},
		{"fresh, never crashed, head 0", torn1, func(c *checker.Checker) { c.Formatted(900, 1) }, false},
		{"fresh, never crashed, head through damage", torn1Head, func(c *checker.Checker) { c.Formatted(900, 1) }, true},
		{"crashed after its format, head 0", torn1, formattedThenCrashed, true},
		{"crashed after its format, head through the unknown op", torn1Head, formattedThenCrashed, false},
	} {
		v := journalVerdictAfter(t, tc.jr, damage, tc.history)
		switch {
		case tc.bad && (v == nil || v.Name != checker.JournalMisread):
			t.Errorf("%s: violation %v, want %q", tc.name, v, checker.JournalMisread)
		case !tc.bad && v != nil:
			t.Errorf("%s: %v", tc.name, v)
		}
	}
}

// TestJournalRecoveryReadsTheDisk: a restart's journal recovery must
// conclude what the checker's own reading of the same disk does: the head
// op, the knowledge of each op of the ring's window, the head its log
// starts from (issue 26: replica/journal/recovery.go's Knowledge and
// AckHead mutants); a slot a fault touched is not judged.
func TestJournalRecoveryReadsTheDisk(t *testing.T) {
	if v := journalVerdict(t, nackableReport(), nil); v != nil {
		t.Fatalf("a faithful report failed: %v", v)
	}
	damage := func(slot uint64) func(f *fakeImages) {
		return func(f *fakeImages) {
			_, prepare, _ := f.Geometry(1).SlotSectors(slot)
			delete(f.sectors[1], prepare) // garbage: a torn prepare write
		}
	}
	held := nackableReport()
	held.Knowledge[2] = "held"
	headHigh := nackableReport()
	headHigh.HeadOp, headHigh.FirstOp, headHigh.Knowledge = 1, 1, append(headHigh.Knowledge, "nackable")
	torn1 := nackableReport()
	torn1.Knowledge[0] = "unknown"
	torn1Head := torn1
	torn1Head.Head = 1
	short := nackableReport()
	short.Knowledge = short.Knowledge[1:]
	for _, tc := range []struct {
		name string
		jr   replica.JournalReport
		edit func(f *fakeImages)
		bad  bool
	}{
		{"op 3 reported held", held, nil, true},
		{"head op above the disk's", headHigh, nil, true},
		{"a torn slot read as nackable", nackableReport(), damage(1), true},
		{"head below an unknown op right above the head op", torn1, damage(1), true},
		{"head through the unknown op", torn1Head, damage(1), false},
		{"head through a nackable op", torn1Head, nil, true},
		{"knowledge of too few ops", short, nil, true},
		{"a faulted slot read otherwise", held, func(f *fakeImages) {
			header, _, _ := f.Geometry(1).SlotSectors(3)
			f.faulted[1][header] = true
		}, false},
	} {
		v := journalVerdict(t, tc.jr, tc.edit)
		switch {
		case tc.bad && (v == nil || v.Name != checker.JournalMisread):
			t.Errorf("%s: violation %v, want %q", tc.name, v, checker.JournalMisread)
		case !tc.bad && v != nil:
			t.Errorf("%s: %v", tc.name, v)
		}
	}
}

// TestJournalUnreadableRecord: a header sector holding a sealed record that
// is neither the slot's marker nor a header of its ops (the zero header a
// clear wrote where it meant the marker: issue 26's
// journal/reconcile.go:205:3:drop-call) fails the restart's check; the
// same sector in a slot a fault touched is not judged.
func TestJournalUnreadableRecord(t *testing.T) {
	zeroRecord := func(faulted bool) func(f *fakeImages) {
		return func(f *fakeImages) {
			header, _, _ := f.Geometry(1).SlotSectors(3)
			b := make([]byte, imgSectorBytes)
			binary.LittleEndian.PutUint64(b[256:], xxh3.HashSeed(b[:256], 0x766f70726a6e6c31)) // "voprjnl1"
			f.sectors[1][header] = b
			f.faulted[1][header] = faulted
		}
	}
	jr := nackableReport()
	jr.Knowledge[2] = "unknown" // a damaged header copy: op 3 unknown
	if v := journalVerdict(t, jr, zeroRecord(false)); v == nil || v.Name != checker.JournalUnreadableRecord {
		t.Fatalf("a sealed zero header in slot 3: violation %v, want %q", v, checker.JournalUnreadableRecord)
	}
	if v := journalVerdict(t, nackableReport(), zeroRecord(true)); v != nil {
		t.Fatalf("a faulted slot was judged: %v", v)
	}
}
