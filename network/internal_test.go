package network

import (
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"
)

// TestPropertyRing: the ring is a FIFO through growth and wrap-around.
func TestPropertyRing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var r ring
		var model []int64
		next := int64(0)
		for range rapid.IntRange(0, 300).Draw(t, "ops") {
			if len(model) > 0 && rapid.Bool().Draw(t, "pop") {
				if got := r.pop().deliverAtNs; got != model[0] {
					t.Fatalf("pop %d, want %d", got, model[0])
				}
				model = model[1:]
			} else {
				next++
				r.push(inflight{deliverAtNs: next})
				model = append(model, next)
			}
			if r.n != len(model) {
				t.Fatalf("len %d, want %d", r.n, len(model))
			}
			for i, v := range model {
				if r.at(i).deliverAtNs != v {
					t.Fatalf("at(%d) = %d, want %d", i, r.at(i).deliverAtNs, v)
				}
			}
		}
	})
}

// TestPool: buffers come in power-of-two classes of at least a header,
// are reused, are poisoned on request, and the free bytes stay bounded.
func TestPool(t *testing.T) {
	p := bufferPool{freeBytesMax: 1 << 12}
	for _, c := range []struct{ size, class int }{{1, 8}, {256, 8}, {257, 9}, {4096, 12}, {4097, 13}} {
		if got := poolClass(c.size); got != c.class {
			t.Fatalf("class(%d) = %d, want %d", c.size, got, c.class)
		}
	}
	b := p.get(300)
	if len(b) != 300 || cap(b) != 512 {
		t.Fatalf("len %d cap %d", len(b), cap(b))
	}
	b[0] = 1
	p.put(b, true)
	if b[0] != poison || b[299] != poison {
		t.Fatal("not poisoned")
	}
	if c := p.get(400); &c[0] != &b[0] {
		t.Fatal("buffer not reused")
	}
	for range 10 {
		p.put(make([]byte, 1024), false)
	}
	if p.freeBytes > p.freeBytesMax {
		t.Fatalf("free bytes %d over the bound %d", p.freeBytes, p.freeBytesMax)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a foreign buffer was accepted")
		}
	}()
	p.put(make([]byte, 300), false)
}

// TestDraw: min + Exp(mean), never below min, capped, and exactly min when
// the mean is zero.
func TestDraw(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sum := int64(0)
	for range 10_000 {
		d := draw(r, 100, 1000)
		if d < 100 || d > 100+expCap*1000 {
			t.Fatalf("draw %d out of bounds", d)
		}
		sum += d - 100
	}
	if mean := sum / 10_000; mean < 900 || mean > 1100 {
		t.Fatalf("mean %d, want about 1000", mean)
	}
	if draw(r, 7, 0) != 7 {
		t.Fatal("zero mean")
	}
}
