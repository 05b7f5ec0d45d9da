package metadata

import "fmt"

// slab hands out the lowest unoccupied key, starting at 0, as Iggy's IdSlab
// does (client-ops.md 3): allocation is a pure function of the occupied set.
type slab[T any] struct {
	items []*T // nil = free; no trailing nils
	count int
	free  int // the lowest free key (len(items) when every key is taken)
}

// vacant returns the key the next insert takes.
func (s *slab[T]) vacant() int { return s.free }

func (s *slab[T]) len() int { return s.count }

func (s *slab[T]) get(key uint32) (*T, bool) {
	if uint64(key) >= uint64(len(s.items)) || s.items[key] == nil {
		return nil, false
	}
	return s.items[key], true
}

// insert stores v at vacant() and returns that key.
func (s *slab[T]) insert(v *T) int {
	if v == nil {
		panic("metadata: slab insert of nil")
	}
	key := s.free
	if key == len(s.items) {
		s.items = append(s.items, v)
	} else {
		s.items[key] = v
	}
	s.count++
	for s.free < len(s.items) && s.items[s.free] != nil {
		s.free++
	}
	return key
}

func (s *slab[T]) remove(key int) {
	if key < 0 || key >= len(s.items) || s.items[key] == nil {
		panic(fmt.Sprintf("metadata: slab remove of free key %d", key))
	}
	s.items[key] = nil
	s.count--
	for n := len(s.items); n > 0 && s.items[n-1] == nil; n-- {
		s.items = s.items[:n-1]
	}
	s.free = min(s.free, key, len(s.items))
}

// each calls f for every occupied key in ascending order.
func (s *slab[T]) each(f func(key int, v *T)) {
	for k, v := range s.items {
		if v != nil {
			f(k, v)
		}
	}
}

// clone copies the slab, each value through cp.
func (s *slab[T]) clone(cp func(*T) *T) slab[T] {
	c := slab[T]{items: make([]*T, len(s.items)), count: s.count, free: s.free}
	for k, v := range s.items {
		if v != nil {
			c.items[k] = cp(v)
		}
	}
	return c
}

// insertAt stores v at key, which must be free: a snapshot's decoder
// rebuilds a slab with its gaps.
func (s *slab[T]) insertAt(key int, v *T) {
	if v == nil || key < 0 {
		panic("metadata: slab insertAt of nil or a negative key")
	}
	for len(s.items) <= key {
		s.items = append(s.items, nil)
	}
	if s.items[key] != nil {
		panic(fmt.Sprintf("metadata: slab insertAt of taken key %d", key))
	}
	s.items[key] = v
	s.count++
	s.free = 0
	for s.free < len(s.items) && s.items[s.free] != nil {
		s.free++
	}
}
