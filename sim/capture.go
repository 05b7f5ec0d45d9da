package sim

import (
	"encoding/binary"
	"io"

	"github.com/zeebo/xxh3"
)

// The -capture file: every frame delivered from one replica to another, in
// delivery order. A file is CaptureMagic, then records:
//
//	record  "VCR1" · frame_len u32 · at_ns i64 · from u8 · to u8 · reserved u16 (0)
//	        · checksum u64 (XXH3 of at_ns through the frame's last byte) · frame
//
// all little-endian. The record carries its own length, so a frame whose
// size field a fault corrupted (the network flips protected bytes, size
// among them) cannot throw a reader out of step, and the checksum tells a
// damaged capture file from a damaged frame. `vopr decode` reads it.
const CaptureMagic = "VOPRCAP1"

// CaptureRecordMagic opens every record.
const CaptureRecordMagic = "VCR1"

// CaptureRecordHeaderSize is a record's size before its frame.
const CaptureRecordHeaderSize = 4 + 4 + 8 + 1 + 1 + 2 + 8

// captureWriter writes the capture; the first write error sticks and stops
// it (the runner reports it).
type captureWriter struct {
	w       io.Writer
	started bool
	err     error
	buf     []byte
}

func (c *captureWriter) frame(atNs int64, from, to uint8, frame []byte) {
	if c == nil || c.err != nil {
		return
	}
	if !c.started {
		c.started = true
		if _, c.err = io.WriteString(c.w, CaptureMagic); c.err != nil {
			return
		}
	}
	b := append(c.buf[:0], CaptureRecordMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(frame)))
	body := len(b)
	b = binary.LittleEndian.AppendUint64(b, uint64(atNs))
	b = append(b, from, to, 0, 0)
	sum := len(b)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = append(b, frame...)
	h := xxh3.New()
	h.Write(b[body:sum])
	h.Write(b[sum+8:])
	binary.LittleEndian.PutUint64(b[sum:], h.Sum64())
	c.buf = b
	_, c.err = c.w.Write(b)
}
