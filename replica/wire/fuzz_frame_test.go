package wire_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/replica/wire/wiresample"
)

var writeCorpus = flag.Bool("write-corpus", false, "rewrite the sample-based seed corpora under testdata/fuzz")

// definedBytes returns, for command c, which header bytes its typed header
// reads and writes: those that survive Decode then Encode of an all-ones
// header.
func definedBytes(c wire.Command) (mask [wire.HeaderSize]bool) {
	var ones wire.Header
	for i := range ones {
		ones[i] = 0xff
	}
	ones.SetCommand(c)
	x := wire.TypedFor(c)
	x.Decode(&ones)
	var back wire.Header
	x.Encode(&back)
	for i := range back {
		mask[i] = back[i] == ones[i]
	}
	return mask
}

// FuzzValidate drives the frame decoder with arbitrary frames, each checked
// twice: as given, and resealed (size set to the length, then the checksums a
// sender would compute), so that mutations reach the field rules behind the
// seal instead of dying at it. Validate must never panic; its errors are
// typed; and on an accepted frame the typed header reads back every byte it
// defines and nothing else (Encode of the decoded header equals the frame on
// defined bytes and is zero elsewhere), so encoder and decoder cover exactly
// the same bytes.
func FuzzValidate(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzValidate (every sample frame).
	f.Fuzz(func(t *testing.T, frame []byte) {
		checkFrame(t, frame)
		if len(frame) >= wire.HeaderSize && len(frame) <= 1<<20 {
			resealed := bytes.Clone(frame)
			wire.Finish(resealed)
			checkFrame(t, resealed)
		}
	})
}

func checkFrame(t *testing.T, frame []byte) {
	err := wire.Validate(frame)
	if err != nil {
		var fe *wire.FrameError
		var ge *wire.FramingError
		if !errors.As(err, &fe) && !errors.As(err, &ge) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
		return
	}
	h := wire.HeaderOf(frame)
	c := h.Command()
	if c.Sealed() && wire.CheckIntegrity(frame) != wire.IntegrityOK {
		t.Fatalf("accepted %v frame with integrity %v", c, wire.CheckIntegrity(frame))
	}
	x := wire.TypedFor(c)
	x.Decode(h)
	var back wire.Header
	x.Encode(&back)
	mask := definedBytes(c)
	for i := range back {
		if mask[i] && back[i] != h[i] || !mask[i] && back[i] != 0 {
			t.Fatalf("%v: byte %d re-encodes as %#02x from %#02x (defined %v)", c, i, back[i], h[i], mask[i])
		}
	}
}

// FuzzReader drives the stream reader with arbitrary streams (maximum frame
// 4 KiB so the size limit is reachable). Frames come out contiguous and well
// framed; the stream ends with io.EOF exactly at its end, or with a framing
// error at the offset of the frame that broke; SplitFrame agrees.
func FuzzReader(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzReader (the sample stream, whole and cut).
	f.Fuzz(func(t *testing.T, stream []byte) {
		const maxSize = 4096
		r := wire.NewReader(bytes.NewReader(stream), maxSize)
		var want int64
		var readErr error
		var frames [][]byte
		for {
			frame, offset, err := r.Next()
			if err != nil {
				readErr = err
				break
			}
			if offset != want {
				t.Fatalf("frame at %d, want %d", offset, want)
			}
			if err := wire.CheckFraming(frame, maxSize); err != nil {
				t.Fatalf("reader returned a badly framed frame: %v", err)
			}
			want += int64(len(frame))
			frames = append(frames, frame)
		}
		var ge *wire.FramingError
		switch {
		case readErr == io.EOF:
			if want != int64(len(stream)) {
				t.Fatalf("EOF at %d of %d bytes", want, len(stream))
			}
		case errors.As(readErr, &ge):
			if ge.Offset != want {
				t.Fatalf("framing error at %d, frame starts at %d", ge.Offset, want)
			}
		default:
			t.Fatalf("unexpected error %v", readErr)
		}
		// SplitFrame over the same bytes finds the same frames.
		rest := stream
		for i := 0; ; i++ {
			n, err := wire.SplitFrame(rest, maxSize)
			if err != nil || n == 0 {
				if i != len(frames) {
					t.Fatalf("SplitFrame found %d frames, Reader %d", i, len(frames))
				}
				if err != nil && (ge == nil || !errors.Is(err, ge.Rule)) {
					t.Fatalf("SplitFrame error %v, Reader %v", err, readErr)
				}
				if err == nil && readErr != io.EOF && !errors.Is(readErr, wire.ErrTruncated) {
					t.Fatalf("SplitFrame wants more bytes, Reader says %v", readErr)
				}
				break
			}
			if i >= len(frames) || !bytes.Equal(rest[:n], frames[i]) {
				t.Fatalf("SplitFrame frame %d differs", i)
			}
			rest = rest[n:]
		}
	})
}

// TestWriteFuzzCorpus writes the sample-based seed corpora with -write-corpus.
// Without the flag it checks that they are present and current.
func TestWriteFuzzCorpus(t *testing.T) {
	stream := wiresample.Stream()
	corpora := map[string][][]byte{
		"FuzzValidate": wiresample.Frames(),
		"FuzzReader":   {stream, stream[:len(stream)-7], stream[:300]},
		"FuzzDecodeOptions": {
			wire.EncodeOptions([]wire.Option{{Key: "enforce_fsync", Kind: wire.OptionBool, Value: []byte{1}},
				{Key: "segment_size", Kind: wire.OptionUint64, Value: []byte{0, 0, 0, 0x40, 0, 0, 0, 0}}}),
			{2, 1, 0, 0, 0, 'k'},
		},
	}
	for _, name := range []string{"FuzzValidate", "FuzzReader", "FuzzDecodeOptions"} {
		dir := filepath.Join("testdata", "fuzz", name)
		for i, input := range corpora[name] {
			path := filepath.Join(dir, fmt.Sprintf("sample-%02d", i))
			content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", input)
			if *writeCorpus {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != content {
				t.Errorf("%s is missing or stale (go test ./replica/wire -run WriteFuzzCorpus -write-corpus): %v", path, err)
			}
		}
	}
}
