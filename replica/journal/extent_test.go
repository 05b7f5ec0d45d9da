package journal

import "testing"

// TestFormattedExtent: Format formats one extent of the ring and Open reads
// only the formatted slots; an append beyond the extent waits for the next
// extent, which is durable and recorded before its done runs, so a crash
// after the done finds the op held; a crash during the extension (before
// the superblock records it) finds the old extent, the slot Empty.
func TestFormattedExtent(t *testing.T) {
	cfg := testConfig()
	cfg.FormatExtentSlots = 2
	e := newEnv(t, cfg, envOptions{seed: 3})
	e.format()
	read := e.dev.Stats().BytesRead
	j, r := e.mustOpen()
	// Four superblock copies, one header run, one batch of two first sectors.
	if r.Formatted != 2 || j.Formatted() != 2 {
		t.Fatalf("after Format: %d slots formatted (journal says %d), want 2", r.Formatted, j.Formatted())
	}
	want := (4*e.geo.superblockChunkSectors + 2*2) * uint64(cfg.SectorSize)
	if got := e.dev.Stats().BytesRead - read; got != want {
		t.Errorf("Open read %d bytes, want %d: four superblock copies and two slots' two sectors", got, want)
	}
	for slot := range cfg.SlotCount {
		if r.Slot(slot).Class != ClassEmpty {
			t.Fatalf("slot %d after Format: %v", slot, r.Slot(slot).Class)
		}
	}

	// Op 5 (slot 5) lies beyond the extent: its append formats slots 2..5.
	done := false
	j.Append(prepareFrame(cfg, 5, 0, 100), func() { done = true })
	e.drain()
	if !done || j.Formatted() != 6 {
		t.Fatalf("append of op 5: done %v, %d slots formatted, want done and 6", done, j.Formatted())
	}
	j.checkInvariants()
	e.crash()
	_, r = e.mustOpen()
	if r.Formatted != 6 || r.Slot(5).Class != ClassClean || r.Slot(5).Op != 5 {
		t.Fatalf("after a crash: %d formatted, slot 5 %+v: want 6 and op 5 held", r.Formatted, r.Slot(5))
	}

	// Op 7 (slot 7): crash once the markers are durable but before the
	// superblock records the extension.
	e = newEnv(t, cfg, envOptions{seed: 4})
	e.format()
	j, _ = e.mustOpen()
	j.Append(prepareFrame(cfg, 7, 0, 100), func() { t.Error("done after a crash") })
	for j.sb.latestFormatted != 8 && e.loop.Step() {
	}
	if j.sb.latestFormatted != 8 {
		t.Fatal("the extension never asked for its superblock update")
	}
	e.crash()
	_, r = e.mustOpen()
	if r.Formatted != 2 || r.Slot(7).Class != ClassEmpty {
		t.Fatalf("after a crash mid-extension: %d formatted, slot 7 %v; want 2 and empty", r.Formatted, r.Slot(7).Class)
	}
}
