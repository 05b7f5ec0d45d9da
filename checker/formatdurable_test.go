package checker_test

import (
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica/journal"
	"github.com/iggy-vopr/vopr/storage"
)

// imageDevice writes replica r's fake image at once, every write durable
// as it is issued; completions run in order from run, never inside the
// call that issued them (as a device's do).
type imageDevice struct {
	f       *fakeImages
	r       uint8
	pending []func()
}

// run completes the I/Os issued, and those their completions issue.
func (d *imageDevice) run() {
	for len(d.pending) > 0 {
		next := d.pending[0]
		d.pending = d.pending[1:]
		next()
	}
}

func (d *imageDevice) SectorSize() int { return imgSectorBytes }
func (d *imageDevice) Sectors() uint64 { return 1 << 20 }
func (d *imageDevice) Read(sector uint64, buf []byte, done func(error)) {
	d.f.Peek(d.r)(sector, buf)
	d.pending = append(d.pending, func() { done(nil) })
}
func (d *imageDevice) Write(sector uint64, data []byte, done func(error)) {
	for k := 0; k < len(data); k += imgSectorBytes {
		d.f.sectors[d.r][sector+uint64(k/imgSectorBytes)] = append([]byte(nil), data[k:k+imgSectorBytes]...)
	}
	d.pending = append(d.pending, func() { done(nil) })
}
func (d *imageDevice) Sync(done func(error)) { d.pending = append(d.pending, func() { done(nil) }) }
func (d *imageDevice) ReadBatch(extents []storage.Extent, done func()) {
	for _, e := range extents {
		d.f.Peek(d.r)(e.Sector, e.Buf)
	}
	d.pending = append(d.pending, done)
}
func (d *imageDevice) WriteBatch(extents []storage.Extent, done func(error)) {
	for _, e := range extents {
		for k := 0; k < len(e.Buf); k += imgSectorBytes {
			d.f.sectors[d.r][e.Sector+uint64(k/imgSectorBytes)] = append([]byte(nil), e.Buf[k:k+imgSectorBytes]...)
		}
	}
	d.pending = append(d.pending, func() { done(nil) })
}

// formatImage formats replica r's fake image with the journal of the fake
// images' geometry.
func formatImage(t *testing.T, f *fakeImages, r uint8) {
	t.Helper()
	g := f.Geometry(r)
	cfg := journal.Config{SectorSize: g.SectorSize, SlotCount: g.SlotCount, FrameSizeMax: g.FrameSizeMax, AppendsMax: 8,
		IOsMax: 16, StateWritesMax: 8, Cluster: g.Cluster, Replica: r, ReplicaCount: g.ReplicaCount}
	formatted := false
	dev := &imageDevice{f: f, r: r}
	journal.Format(dev, cfg, func(err error) {
		if err != nil {
			t.Fatal(err)
		}
		formatted = true
	})
	dev.run()
	if !formatted {
		t.Fatal("the format did not finish")
	}
}

// TestFormatDurable: a format reported done must leave a disk that opens
// as a formatted journal, every formatted slot holding the empty marker
// (issue 26: journal/format.go:126:45, the format's sync issued with its
// last write still in flight, reported done before that write was
// durable); a sector the fault model touched excuses what it holds.
func TestFormatDurable(t *testing.T) {
	f := newFakeImages(3)
	c := checker.New(3)
	c.SetArtifacts(f)
	formatImage(t, f, 1)
	c.Formatted(1000, 1)
	if v := c.Violation(); v != nil {
		t.Fatalf("a formatted disk failed: %v", v)
	}

	header, prepare, _ := f.Geometry(1).SlotSectors(5)
	for _, lost := range []uint64{header, prepare} {
		f := newFakeImages(3)
		c := checker.New(3)
		c.SetArtifacts(f)
		formatImage(t, f, 1)
		delete(f.sectors[1], lost) // the marker's write never landed
		c.Formatted(1000, 1)
		if v := c.Violation(); v == nil || v.Name != checker.FormatNotDurable {
			t.Fatalf("sector %d lost: violation %v, want %q", lost, v, checker.FormatNotDurable)
		}
		f.faulted[1][lost] = true
		c = checker.New(3)
		c.SetArtifacts(f)
		c.Formatted(1000, 1)
		if v := c.Violation(); v != nil {
			t.Fatalf("a faulted sector was judged: %v", v)
		}
	}

	f = newFakeImages(3)
	c = checker.New(3)
	c.SetArtifacts(f)
	c.Formatted(1000, 1) // nothing written: no superblock
	if v := c.Violation(); v == nil || v.Name != checker.FormatNotDurable {
		t.Fatalf("an unformatted disk: violation %v, want %q", v, checker.FormatNotDurable)
	}
}
