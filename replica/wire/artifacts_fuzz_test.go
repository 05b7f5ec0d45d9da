package wire

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"
)

// The fuzz targets of the checksummed artifact formats. A mutated input
// almost never carries a matching checksum, so each target checks the input
// twice: as given (every rejection path, no panic) and with its checksums
// recomputed (so the fuzzer also reaches the rules behind the checksum and
// the success path). Whatever decodes must re-encode to exactly its input,
// or, for a manifest with longer entries, decode to the same entries again.
// The seed corpora live in testdata/fuzz/<target>/.

// artResealTrailer returns a copy of b whose last 8 bytes are XXH3 of the
// bytes before them, or nil when b is too short to have a trailer.
func artResealTrailer(b []byte) []byte {
	if len(b) < trailerLen {
		return nil
	}
	c := slices.Clone(b)
	n := len(c) - trailerLen
	put64(c[n:], xxh3.Hash(c[:n]))
	return c
}

// artResealBatch returns a copy of b with batch_length, every frame checksum
// and batch_checksum recomputed, or nil when b's frames cannot be walked.
func artResealBatch(b []byte) []byte {
	if len(b) < BatchHeaderSize {
		return nil
	}
	c := slices.Clone(b)
	put64(c[offBatchLength:], uint64(len(c)))
	count := u32(c[offBatchMessageCount:])
	off := BatchHeaderSize
	for i := uint32(0); i < count; i++ {
		end, err := frameEnd(c, off, i)
		if err != nil {
			return nil
		}
		put64(c[off+offMsgChecksum:], xxh3.Hash(c[off+offMsgID:end]))
		off = end
	}
	if off != len(c) {
		return nil
	}
	put64(c[offBatchChecksum:], BatchChecksum(c))
	return c
}

func FuzzDecodeBatch(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		artCheckBatchInput(t, b)
		if c := artResealBatch(b); c != nil {
			artCheckBatchInput(t, c)
		}
	})
}

func FuzzDecodeManifest(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		artCheckManifestInput(t, b)
		if c := artResealTrailer(b); c != nil {
			artCheckManifestInput(t, c)
		}
	})
}

func FuzzDecodeClientTable(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		artCheckClientTableInput(t, b)
		if c := artResealTrailer(b); c != nil {
			artCheckClientTableInput(t, c)
		}
	})
}

func FuzzDecodeConsumerOffsets(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		artCheckConsumerOffsetsInput(t, b)
		if c := artResealTrailer(b); c != nil {
			artCheckConsumerOffsetsInput(t, c)
		}
	})
}

func FuzzDecodeSuperblock(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		artCheckSuperblockInput(t, b)
		if c := artResealTrailer(b); c != nil {
			artCheckSuperblockInput(t, c)
		}
	})
}

func TestFuzzResealersReachSuccess(t *testing.T) {
	// The resealers must turn a payload-only edit back into a valid input,
	// or the fuzz targets would never reach the success path.
	b := artGoldenBatch(t)
	b[len(b)-1] ^= 1
	if err := VerifyBatch(b); err == nil {
		t.Fatal("edited batch still verifies")
	}
	if err := VerifyBatch(artResealBatch(b)); err != nil {
		t.Fatalf("resealed batch: %v", err)
	}
	m := mustHex(t, artManifestSampleHex)
	m[10] ^= 1
	if _, err := DecodeManifest(artResealTrailer(m)); err != nil {
		t.Fatalf("resealed manifest: %v", err)
	}
	if artResealBatch(b[:300]) != nil || artResealTrailer(b[:7]) != nil {
		t.Fatal("resealers accepted inputs they cannot fix")
	}
}

// artReadSeed reads a one-value corpus file in Go's "go test fuzz v1" format.
func artReadSeed(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || lines[0] != "go test fuzz v1" ||
		!strings.HasPrefix(lines[1], "[]byte(") || !strings.HasSuffix(lines[1], ")") {
		t.Fatalf("%s: not a one-[]byte corpus file", path)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}

func TestFuzzSeedCorpus(t *testing.T) {
	// The seeds named valid-* must decode and the ones named broken-* must
	// not, so that the corpus starts the fuzzer on both sides of every
	// target. (Inputs the fuzzer saves after a failure have other names and
	// are regression inputs: they only have to pass the target itself.)
	decoders := map[string]func([]byte) error{
		"FuzzDecodeBatch":           VerifyBatch,
		"FuzzDecodeManifest":        func(b []byte) error { _, err := DecodeManifest(b); return err },
		"FuzzDecodeClientTable":     func(b []byte) error { _, err := DecodeClientTable(b); return err },
		"FuzzDecodeConsumerOffsets": func(b []byte) error { _, err := DecodeConsumerOffsets(b); return err },
		"FuzzDecodeSuperblock": func(b []byte) error {
			// A record is valid on its own; a payload of a VsrState's
			// length must also be a valid VsrState.
			_, p, err := DecodeSuperblock(b)
			if err == nil && (len(p) == VsrStateSize || len(p) == VsrStateLegacySize) {
				_, err = DecodeVsrState(p)
			}
			return err
		},
	}
	for _, target := range slices.Sorted(maps.Keys(decoders)) {
		decode := decoders[target]
		paths, err := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
		if err != nil {
			t.Fatal(err)
		}
		var valid, broken int
		for _, path := range paths {
			name := filepath.Base(path)
			err := decode(artReadSeed(t, path))
			switch {
			case strings.HasPrefix(name, "valid-"):
				valid++
				if err != nil {
					t.Errorf("%s/%s: %v", target, name, err)
				}
			case strings.HasPrefix(name, "broken-"):
				broken++
				if err == nil {
					t.Errorf("%s/%s decodes", target, name)
				}
			}
		}
		if valid < 2 || broken < 3 {
			t.Errorf("%s: %d valid and %d broken seeds, want at least 2 and 3", target, valid, broken)
		}
	}
}
