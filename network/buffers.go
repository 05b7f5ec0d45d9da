package network

import "math/bits"

// ring is a FIFO of frames in flight on one direction. It grows by doubling
// and never shrinks, so a direction in steady state queues without
// allocating; Options.InFlightFramesMax bounds it.
type ring struct {
	items []inflight
	head  int
	n     int
}

func (r *ring) push(it inflight) {
	if r.n == len(r.items) {
		grown := make([]inflight, max(8, 2*len(r.items)))
		for i := range r.n {
			grown[i] = r.items[(r.head+i)%len(r.items)]
		}
		r.items, r.head = grown, 0
	}
	r.items[(r.head+r.n)%len(r.items)] = it
	r.n++
}

// front returns the oldest frame; the ring must not be empty.
func (r *ring) front() *inflight {
	if r.n == 0 {
		panic("network: front of an empty direction")
	}
	return &r.items[r.head]
}

// at returns the i-th oldest frame.
func (r *ring) at(i int) *inflight { return &r.items[(r.head+i)%len(r.items)] }

// pop removes and returns the oldest frame; the ring must not be empty.
func (r *ring) pop() inflight {
	it := *r.front()
	r.items[r.head] = inflight{} // drop the buffer reference
	r.head = (r.head + 1) % len(r.items)
	r.n--
	return it
}

// Buffer size classes are powers of two, from one header (256 bytes) to
// 1 << poolClassMax (the largest FrameSizeMax allowed).
const (
	poolClassMin = 8
	poolClassMax = 30
)

// poolFreeBytesMax bounds the bytes a pool keeps free. Beyond it, returned
// buffers go to the garbage collector: a burst of large frames must not pin
// its memory for the rest of the run.
const poolFreeBytesMax = 64 << 20

// poison is the byte a freed buffer is filled with (Options.PoisonBuffers).
const poison = 0xA5

// bufferPool is the network's free list of frame buffers, by size class, so
// that the steady path copies each frame into a recycled buffer.
type bufferPool struct {
	free         [poolClassMax + 1][][]byte
	freeBytes    int64
	freeBytesMax int64
}

func poolClass(size int) int {
	if size <= 1<<poolClassMin {
		return poolClassMin
	}
	return bits.Len(uint(size - 1))
}

// get returns a buffer of length size.
func (p *bufferPool) get(size int) []byte {
	class := poolClass(size)
	if class > poolClassMax {
		panic("network: buffer larger than the largest pool class")
	}
	list := p.free[class]
	if k := len(list); k > 0 {
		b := list[k-1]
		list[k-1] = nil
		p.free[class] = list[:k-1]
		p.freeBytes -= int64(cap(b))
		return b[:size]
	}
	return make([]byte, size, 1<<class)
}

// put returns a buffer from get, overwriting its bytes first if poison.
func (p *bufferPool) put(b []byte, poisonIt bool) {
	class := poolClass(cap(b))
	if cap(b) != 1<<class {
		panic("network: buffer returned to the pool was not from it")
	}
	if poisonIt && len(b) > 0 {
		// Fill by doubling copies: memmove speed, not a byte loop.
		b[0] = poison
		for i := 1; i < len(b); i *= 2 {
			copy(b[i:], b[:i])
		}
	}
	if p.freeBytes+int64(cap(b)) > p.freeBytesMax {
		return
	}
	p.freeBytes += int64(cap(b))
	p.free[class] = append(p.free[class], b[:0])
}
