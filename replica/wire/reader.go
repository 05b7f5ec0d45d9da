package wire

import (
	"errors"
	"fmt"
	"io"
)

// Reader reads frames from a byte stream, as Iggy's replica-port reader does
// (wire.md 1.1): read the 256-byte header, check size against 256 and the
// maximum frame, read the body, then check the command byte. Any violation,
// and a stream that ends inside a frame, is a *FramingError after which the
// stream is unusable (a connection would be closed).
type Reader struct {
	src     io.Reader
	maxSize uint32
	offset  int64 // stream offset of the next frame
	err     error // sticky: the first framing or read error
}

// NewReader returns a Reader over src that refuses frames above maxSize
// bytes (MaxFrameSizeDefault is Iggy's default).
func NewReader(src io.Reader, maxSize uint32) *Reader {
	if maxSize < HeaderSize {
		panic(fmt.Sprintf("wire: maximum frame size %d below the header size", maxSize))
	}
	return &Reader{src: src, maxSize: maxSize}
}

// Offset returns the stream offset of the next frame.
func (r *Reader) Offset() int64 { return r.offset }

// Next returns the next frame (header and body, a fresh slice the caller owns)
// and its stream offset. At a clean end of stream, between frames, it returns
// io.EOF. Errors are sticky.
func (r *Reader) Next() (frame []byte, offset int64, err error) {
	if r.err != nil {
		return nil, r.offset, r.err
	}
	offset = r.offset
	var h Header
	n, err := io.ReadFull(r.src, h[:])
	switch {
	case err == io.EOF:
		r.err = io.EOF
		return nil, offset, io.EOF
	case errors.Is(err, io.ErrUnexpectedEOF):
		return r.fail(&FramingError{Rule: ErrTruncated, Offset: offset, Have: n})
	case err != nil:
		return r.fail(fmt.Errorf("wire: reading frame at offset %d: %w", offset, err))
	}
	size := h.Size()
	if size < HeaderSize {
		return r.fail(&FramingError{Rule: ErrSizeBelowHeader, Offset: offset, Size: size, Command: h.Command()})
	}
	if size > r.maxSize {
		return r.fail(&FramingError{Rule: ErrSizeAboveMax, Offset: offset, Size: size, Max: r.maxSize, Command: h.Command()})
	}
	frame = make([]byte, size)
	copy(frame, h[:])
	m, err := io.ReadFull(r.src, frame[HeaderSize:])
	switch {
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return r.fail(&FramingError{Rule: ErrTruncated, Offset: offset, Size: size, Have: HeaderSize + m, Command: h.Command()})
	case err != nil:
		return r.fail(fmt.Errorf("wire: reading frame body at offset %d: %w", offset, err))
	}
	if !h.Command().Valid() {
		return r.fail(&FramingError{Rule: ErrCommandUnknown, Offset: offset, Size: size, Command: h.Command()})
	}
	r.offset += int64(size)
	return frame, offset, nil
}

func (r *Reader) fail(err error) ([]byte, int64, error) {
	r.err = err
	return nil, r.offset, err
}

// SplitFrame finds the first frame in buf, for readers that accumulate bytes
// themselves. It returns the frame's length when buf holds all of it, 0 and
// no error when more bytes are needed, and a *FramingError (Offset 0) when
// the bytes can never form a valid frame. The checks and their order are the
// Reader's.
func SplitFrame(buf []byte, maxSize uint32) (int, error) {
	if len(buf) < HeaderSize {
		return 0, nil
	}
	h := HeaderOf(buf)
	size := h.Size()
	switch {
	case size < HeaderSize:
		return 0, &FramingError{Rule: ErrSizeBelowHeader, Size: size, Command: h.Command()}
	case size > maxSize:
		return 0, &FramingError{Rule: ErrSizeAboveMax, Size: size, Max: maxSize, Command: h.Command()}
	case uint64(len(buf)) < uint64(size):
		return 0, nil
	case !h.Command().Valid():
		return 0, &FramingError{Rule: ErrCommandUnknown, Size: size, Command: h.Command()}
	}
	return int(size), nil
}
