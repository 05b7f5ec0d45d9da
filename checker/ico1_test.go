package checker_test

import (
	"encoding/binary"
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/zeebo/xxh3"
)

// ico1By builds an ICO1 artifact by hand from wire.md 8.5, with pad bytes
// of zeros after the magic (0: the format).
func ico1By(pad int, next uint64, consumers ...[2]uint64) []byte {
	b := append([]byte("ICO1"), make([]byte, pad)...)
	b = append(b, 1)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = binary.LittleEndian.AppendUint64(b, next)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(consumers)))
	b = binary.LittleEndian.AppendUint32(b, 0)
	for _, c := range consumers {
		b = binary.LittleEndian.AppendUint32(b, uint32(c[0]))
		b = binary.LittleEndian.AppendUint64(b, c[1])
	}
	return binary.LittleEndian.AppendUint64(b, xxh3.Hash(b))
}

// TestInstalledICO1ReadByTheFormat: the checker reads an installed ICO1 by
// wire.md 8.5 itself: the format's bytes pass, and an artifact whose
// header is a byte longer (issue 26: wire/offsets.go:19, which the
// replica's encoder and decoder shared) is named, though it decodes with
// replica/wire's decoder of the same mistake.
func TestInstalledICO1ReadByTheFormat(t *testing.T) {
	f := newInstallFixture(t)
	seg, _ := f.stateAt(6)
	f.install(2, testGroup, 6, seg, ico1By(0, 3, [2]uint64{2, 2}, [2]uint64{3, 0}))
	f.want("")

	f = newInstallFixture(t)
	f.install(2, testGroup, 6, seg, ico1By(1, 3, [2]uint64{2, 2}, [2]uint64{3, 0}))
	f.want(checker.InstallDiverged)
}
