package timeline

// ring keeps the last len(buf) values pushed, oldest first: the detail
// window's events, frames and requests.
type ring[T any] struct {
	buf   []T
	start int // the oldest value's index
	n     int
	// dropped counts the values pushed out.
	dropped int
}

func newRing[T any](size int) *ring[T] { return &ring[T]{buf: make([]T, max(size, 1))} }

// push adds v; when the ring is full it returns the oldest value, which v
// replaces, and true.
func (r *ring[T]) push(v T) (old T, evicted bool) {
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = v
		r.n++
		return old, false
	}
	old = r.buf[r.start]
	r.buf[r.start] = v
	r.start = (r.start + 1) % len(r.buf)
	r.dropped++
	return old, true
}

// all returns the values kept, oldest first.
func (r *ring[T]) all() []T {
	out := make([]T, 0, r.n)
	for i := range r.n {
		out = append(out, r.buf[(r.start+i)%len(r.buf)])
	}
	return out
}
