package wire

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// decodeAs returns a fresh typed header for h's command, decoded from h, and
// checks that it has x's type.
func decodeAs(x Typed, h *Header) Typed {
	y := TypedFor(h.Command())
	if reflect.TypeOf(y) != reflect.TypeOf(x) {
		panic(fmt.Sprintf("TypedFor(%v) is %T, want %T", h.Command(), y, x))
	}
	y.Decode(h)
	return y
}

// TestPropertyRoundTrip: every command's typed header survives Encode then
// Decode unchanged, for arbitrary field values.
func TestPropertyRoundTrip(t *testing.T) {
	for _, c := range replicaPlaneCommands() {
		t.Run(c.SnakeName(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				x := genAny(t, c)
				var h Header
				x.Encode(&h)
				if y := decodeAs(x, &h); !reflect.DeepEqual(x, y) {
					t.Fatalf("round trip changed the header\n in  %+v\n out %+v", x, y)
				}
				if h.Command() != c {
					t.Fatalf("encoded command %v", h.Command())
				}
			})
		})
	}
}

// TestPropertyBuildValidateDecode: a frame built from valid field values
// passes Validate and decodes back to those values, with size, checksum_body
// and checksum as BuildFrame set them.
func TestPropertyBuildValidateDecode(t *testing.T) {
	for _, c := range replicaPlaneCommands() {
		if c == CommandRepairPrepare {
			continue // covered by TestPropertyRepairPrepare
		}
		t.Run(c.SnakeName(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				x, body := genValid(t, c)
				frame := BuildFrame(x, body)
				if err := Validate(frame); err != nil {
					t.Fatalf("Validate rejected a valid frame: %v", err)
				}
				h := HeaderOf(frame)
				if int(h.Size()) != len(frame) || !bytes.Equal(frame[HeaderSize:], body) {
					t.Fatalf("size %d for %d bytes", h.Size(), len(frame))
				}
				y := decodeAs(x, h)
				// BuildFrame owns these three fields.
				x.(interface{ setPrefix(Prefix) }).setPrefix(withFinish(prefixOf(x), h))
				if !reflect.DeepEqual(x, y) {
					t.Fatalf("decoded header differs\n in  %+v\n out %+v", x, y)
				}
			})
		})
	}
}

func prefixOf(x Typed) Prefix {
	return reflect.ValueOf(x).Elem().FieldByName("Prefix").Interface().(Prefix)
}

func withFinish(p Prefix, h *Header) Prefix {
	p.Size, p.ChecksumBody, p.Checksum = h.Size(), h.ChecksumBody(), h.Checksum()
	return p
}

// TestPropertyRepairPrepare: a journaled prepare converted to RepairPrepare
// and back is byte-identical, and validates in both forms.
func TestPropertyRepairPrepare(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x, body := genValid(t, CommandPrepare)
		frame := BuildFrame(x, body)
		orig := bytes.Clone(frame)
		ToRepairPrepare(frame)
		if err := Validate(frame); err != nil {
			t.Fatalf("RepairPrepare rejected: %v", err)
		}
		if !bytes.Equal(frame[:60], orig[:60]) || !bytes.Equal(frame[61:], orig[61:]) {
			t.Fatalf("conversion changed more than byte 60")
		}
		ToPrepare(frame)
		if !bytes.Equal(frame, orig) {
			t.Fatalf("round trip changed the frame")
		}
	})
}

// TestPropertyValidateNeverPanics: arbitrary bytes, and arbitrary bytes with
// a plausible size and command, never panic the typed decode.
func TestPropertyValidateNeverPanics(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.Byte(), 0, 1200).Draw(t, "bytes")
		if len(b) >= HeaderSize && rapid.Bool().Draw(t, "fix size") {
			put32(b[offSize:], uint32(len(b)))
			b[offCommand] = byte(rapid.IntRange(0, 31).Draw(t, "command"))
		}
		err := Validate(b)
		var fe *FrameError
		var ge *FramingError
		if err != nil && !errors.As(err, &fe) && !errors.As(err, &ge) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
		_, _ = SplitFrame(b, MaxFrameSizeDefault)
		_, _ = DecodeSuffix(b, rapid.Uint64().Draw(t, "head"))
	})
}

// sealedOrPrepare are the commands whose header is covered by a frame seal
// or a prepare identity.
func sealedOrPrepare() []Command {
	var cs []Command
	for _, c := range replicaPlaneCommands() {
		if (c.Sealed() || c == CommandPrepare) && c != CommandRepairPrepare {
			cs = append(cs, c)
		}
	}
	return cs
}

// TestPropertyHeaderBitFlipDetected: flipping any single bit of a sealed
// header, or of a prepare's header outside view, is rejected by Validate.
// The one byte that can escape is the command byte, when the flip turns the
// frame into an unsealed command (say Commit 9 into Reply 8): then the frame
// is judged by that command's rules, so the property is that it is never
// accepted as a sealed or prepare command. View is outside the prepare
// identity by design (retransmissions re-stamp it), so a flip there passes.
func TestPropertyHeaderBitFlipDetected(t *testing.T) {
	for _, c := range sealedOrPrepare() {
		t.Run(c.SnakeName(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				x, body := genValid(t, c)
				frame := BuildFrame(x, body)
				bit := rapid.IntRange(0, HeaderSize*8-1).Draw(t, "bit")
				frame[bit/8] ^= 1 << (bit % 8)
				err := Validate(frame)
				byteAt := bit / 8
				switch {
				case c == CommandPrepare && byteAt >= offView && byteAt < offView+4:
					if err != nil {
						t.Fatalf("view flip rejected: %v", err)
					}
				case byteAt == offCommand:
					if got := HeaderOf(frame).Command(); err == nil && (got.Sealed() || got.IsPrepare()) {
						t.Fatalf("command flip %v -> %v accepted", c, got)
					}
				case err == nil:
					t.Fatalf("flip of bit %d (byte %d) not detected", bit, byteAt)
				}
			})
		})
	}
}

// TestPropertyBodyBitFlipDetected: flipping any bit of a metadata prepare's
// body, or of a DVC/SV suffix body, is rejected.
func TestPropertyBodyBitFlipDetected(t *testing.T) {
	for _, c := range []Command{CommandPrepare, CommandDoViewChange, CommandStartView} {
		t.Run(c.SnakeName(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				x, body := genValid(t, c)
				if p, ok := x.(*PrepareHeader); ok {
					p.Group = MetadataGroup
				}
				if len(body) == 0 {
					body = []byte{0}
					if c != CommandPrepare {
						body = make([]byte, HeaderSize)
						setSuffixLen(x, 1)
					}
				}
				frame := BuildFrame(x, body)
				if err := Validate(frame); err != nil {
					t.Fatalf("valid frame rejected: %v", err)
				}
				bit := rapid.IntRange(0, len(body)*8-1).Draw(t, "bit")
				frame[HeaderSize+bit/8] ^= 1 << (bit % 8)
				if err := Validate(frame); !errors.Is(err, ErrBodySealMismatch) {
					t.Fatalf("body flip at bit %d: %v", bit, err)
				}
			})
		})
	}
}

// setSuffixLen keeps a DVC/SV header consistent with a one-entry body.
func setSuffixLen(x Typed, n uint64) {
	switch v := x.(type) {
	case *DoViewChangeHeader:
		v.Op = max(v.Op, n)
	case *StartViewHeader:
		v.Op = max(v.Op, n)
	}
}

// genChain draws a valid suffix: n entries from head down, each a sealed
// prepare chained to the one below, or a blank.
func genChain(t *rapid.T, n int, head uint64) []Header {
	entries := make([]Header, n)
	var parent U128
	ts := rapid.Uint64Range(1, 1<<40).Draw(t, "ts0")
	// Build bottom-up so each parent is known.
	for i := n - 1; i >= 0; i-- {
		op := head - uint64(i)
		if rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("blank%d", i)) == 0 {
			entries[i] = BlankEntry(op)
			parent = U128{}
			continue
		}
		ts += rapid.Uint64Range(1, 1000).Draw(t, fmt.Sprintf("dt%d", i))
		p := PrepareHeader{
			Prefix:    Prefix{Command: CommandPrepare, View: rapid.Uint32().Draw(t, fmt.Sprintf("view%d", i))},
			Parent:    parent,
			Op:        op,
			Timestamp: ts,
			Operation: genOperation(t, fmt.Sprintf("operation%d", i)),
			Group:     MetadataGroup,
		}
		frame := BuildFrame(&p, nil)
		entries[i] = *HeaderOf(frame)
		parent = entries[i].Checksum()
	}
	return entries
}

// TestPropertySuffixRoundTrip: a DVC whose suffix has arbitrary bitsets
// (bits below its length) round-trips, and any bit at or beyond the length is
// rejected.
func TestPropertySuffixRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, SuffixEntriesMax).Draw(t, "n")
		head := rapid.Uint64Range(uint64(n), 1<<40).Draw(t, "head")
		entries := genChain(t, n, head)
		x := DoViewChangeHeader{
			Prefix:        Prefix{View: 9},
			Op:            head,
			Commit:        rapid.Uint64Max(head).Draw(t, "commit"),
			Group:         MetadataGroup,
			LogView:       rapid.Uint32Max(9).Draw(t, "log_view"),
			NackBitset:    genBitset(t, "nack", n),
			PresentBitset: genBitset(t, "present", n),
		}
		frame := BuildFrame(&x, EncodeSuffix(entries))
		if err := Validate(frame); err != nil {
			t.Fatalf("Validate: %v", err)
		}
		var y DoViewChangeHeader
		y.Decode(HeaderOf(frame))
		if y.NackBitset != x.NackBitset || y.PresentBitset != x.PresentBitset {
			t.Fatalf("bitsets changed: %s/%s -> %s/%s", x.NackBitset, x.PresentBitset, y.NackBitset, y.PresentBitset)
		}
		got, err := DecodeSuffix(frame[HeaderSize:], y.Op)
		if err != nil {
			t.Fatalf("DecodeSuffix: %v", err)
		}
		if !reflect.DeepEqual(got, entries) && !(len(got) == 0 && len(entries) == 0) {
			t.Fatalf("suffix changed")
		}
		for i := range got {
			if IsBlank(&got[i]) != IsBlank(&entries[i]) {
				t.Fatalf("entry %d blank status changed", i)
			}
		}
		if n < SuffixEntriesMax {
			beyond := rapid.IntRange(n, SuffixEntriesMax-1).Draw(t, "beyond")
			if rapid.Bool().Draw(t, "which") {
				x.NackBitset = x.NackBitset.WithBit(beyond)
			} else {
				x.PresentBitset = x.PresentBitset.WithBit(beyond)
			}
			frame = BuildFrame(&x, EncodeSuffix(entries))
			if err := Validate(frame); !errors.Is(err, ErrBitsetBeyondSuffix) {
				t.Fatalf("bit %d beyond %d entries: %v", beyond, n, err)
			}
		}
	})
}
