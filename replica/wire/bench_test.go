package wire

import (
	"testing"
)

// benchPrepare is a metadata prepare with a small body, as the hot path sees.
func benchPrepare() []byte {
	p := b6Prepare()
	p.Operation = OperationCreateStream
	return BuildFrame(&p, make([]byte, 64))
}

// benchDVC is a DoViewChange with a full 128-entry suffix.
func benchDVC() []byte {
	entries := make([]Header, SuffixEntriesMax)
	var parent U128
	for i := SuffixEntriesMax - 1; i >= 0; i-- {
		p := PrepareHeader{Prefix: Prefix{Command: CommandPrepare}, Parent: parent, Op: uint64(1000 - i),
			Timestamp: uint64(1_000_000 - i), Operation: OperationCreateStream, Group: MetadataGroup}
		entries[i] = *HeaderOf(BuildFrame(&p, nil))
		parent = entries[i].Checksum()
	}
	x := DoViewChangeHeader{Prefix: Prefix{View: 3}, Op: 1000, Commit: 900, Group: MetadataGroup, LogView: 2,
		PresentBitset: U128{Lo: ^uint64(0), Hi: ^uint64(0)}}
	return BuildFrame(&x, EncodeSuffix(entries))
}

// TestDecodeDoesNotAllocateLargest: validating and decoding the benchmarked
// frames costs no allocation, including a DVC with a full 128-entry suffix,
// which the sample stream does not reach. TestDecodeDoesNotAllocate
// (alloc_test.go) covers every command.
func TestDecodeDoesNotAllocateLargest(t *testing.T) {
	frames := [][]byte{benchPrepare(), benchDVC()}
	commit := CommitHeader{Commit: 5, Group: MetadataGroup}
	frames = append(frames, BuildFrame(&commit, nil))
	for _, frame := range frames {
		h := HeaderOf(frame)
		allocs := testing.AllocsPerRun(100, func() {
			if err := Validate(frame); err != nil {
				t.Fatal(err)
			}
			var p PrepareHeader
			p.Decode(h)
			var d DoViewChangeHeader
			d.Decode(h)
			var c CommitHeader
			c.Decode(h)
		})
		if allocs != 0 {
			t.Errorf("%v: %v allocations per validate+decode", h.Command(), allocs)
		}
	}
}

func BenchmarkFrameSeal(b *testing.B) {
	var h Header
	h.SetSize(HeaderSize)
	h.SetCommand(CommandCommit)
	b.ReportAllocs()
	for b.Loop() {
		h.SealFrame()
	}
}

func BenchmarkFrameVerify(b *testing.B) {
	c := CommitHeader{Commit: 5, Group: MetadataGroup}
	frame := BuildFrame(&c, nil)
	b.ReportAllocs()
	for b.Loop() {
		if err := Validate(frame); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPrepareIdentity(b *testing.B) {
	frame := benchPrepare()
	h := HeaderOf(frame)
	b.ReportAllocs()
	for b.Loop() {
		_ = PrepareIdentity(h)
	}
}

func BenchmarkPrepareEncodeDecode(b *testing.B) {
	p := b6Prepare()
	body := make([]byte, 64)
	frame := BuildFrame(&p, body)
	h := HeaderOf(frame)
	p.Decode(h) // take the size BuildFrame set
	b.ReportAllocs()
	for b.Loop() {
		p.Encode(h)
		h.SetChecksumBody(BodySeal(body))
		h.SealPrepare()
		if err := Validate(frame); err != nil {
			b.Fatal(err)
		}
		var q PrepareHeader
		q.Decode(h)
	}
}

func BenchmarkDoViewChangeEncodeDecode128(b *testing.B) {
	frame := benchDVC()
	var x DoViewChangeHeader
	x.Decode(HeaderOf(frame))
	body := frame[HeaderSize:]
	entries, err := DecodeSuffix(body, x.Op)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		out := BuildFrame(&x, EncodeSuffix(entries))
		if err := Validate(out); err != nil {
			b.Fatal(err)
		}
		var y DoViewChangeHeader
		y.Decode(HeaderOf(out))
		if _, err := DecodeSuffix(out[HeaderSize:], y.Op); err != nil {
			b.Fatal(err)
		}
	}
}
