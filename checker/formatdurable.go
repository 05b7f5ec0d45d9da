package checker

import (
	"fmt"

	"github.com/iggy-vopr/vopr/checker/diskread"
)

// FormatNotDurable: a replica's format reported done (as `tigerbeetle
// format` exits) while its disk would not open as a formatted journal
// (docs/disk-format.md 11): a superblock quorum recording the formatted
// extent, and the empty marker in both copies of every slot of it. The
// format promises a durable disk: a crash right after it must find what
// it wrote, or the restart reads slots it never wrote as damaged (a
// journal that cannot tell a fresh slot from a torn one nacks nothing
// there).
const FormatNotDurable = "format done before durable"

// Formatted checks replica r's disk, read by the checker's own reader at
// the moment its format reported done. A sector the fault model touched
// (the atlas may fault the format's writes too) excuses what depends on
// it.
func (c *Checker) Formatted(nowNs int64, r uint8) {
	c.nowNs = nowNs
	c.formatDone(r)
	if c.art.src == nil || c.violation != nil {
		return
	}
	g, peek := c.art.src.Geometry(r), c.art.src.Peek(r)
	rec, err := diskread.Recover(g, peek)
	if err != nil {
		if first, n := g.SuperblockSectors(); c.art.src.Faulted(r, first, n) {
			return
		}
		c.fail(Violation{Name: FormatNotDurable, Replicas: []uint8{r},
			Detail: fmt.Sprintf("replica %d's format is done, and a restart now would not open its disk: %v", r, err)})
		return
	}
	if len(rec.Slots) == 0 {
		c.fail(Violation{Name: FormatNotDurable, Replicas: []uint8{r},
			Detail: fmt.Sprintf("replica %d's format is done, and its superblock records no formatted slot", r)})
		return
	}
	for k := range uint64(len(rec.Slots)) {
		s := rec.Slots[k]
		if s.Class == diskread.ClassEmpty {
			continue
		}
		header, prepare, n := g.SlotSectors(k)
		if c.art.src.Faulted(r, header, 1) || c.art.src.Faulted(r, prepare, n) {
			continue
		}
		c.fail(Violation{Name: FormatNotDurable, Replicas: []uint8{r},
			Detail: fmt.Sprintf("replica %d's format is done, and slot %d of the %d it formatted does not durably hold the empty marker (header copy %s, prepare chunk %s)",
				r, k, len(rec.Slots), s.Header.State, s.Prepare.State)})
		return
	}
}
