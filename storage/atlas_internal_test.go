package storage

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAtlasCheckCatches: Check names each kind of violation (the bound, a
// replica outside the cluster, a clean zone granted, linked zones apart, a
// whole zone to one replica).
func TestAtlasCheckCatches(t *testing.T) {
	build := func() *Atlas {
		layout := NewLayout(Zone{"sb", 1, 4}, Zone{"h", 1, 8}, Zone{"p", 2, 8})
		return NewAtlas(layout, 3, rand.New(rand.NewPCG(1, 2)), AtlasOptions{Clean: []string{"sb"}, Linked: [][2]string{{"h", "p"}}})
	}
	for _, tc := range []struct {
		want  string
		spoil func(a *Atlas)
	}{
		{"more than quorum_replication-1", func(a *Atlas) { a.masks[1][0] = 0b011 }},
		{"beyond the cluster", func(a *Atlas) { a.masks[1][0] = 0b1000 }},
		{"clean zone", func(a *Atlas) { a.masks[0][0] = 0b001 }},
		{"differs from linked", func(a *Atlas) {
			a.masks[2] = append([]uint64(nil), a.masks[1]...) // unshare
			if a.masks[2][3] == 0 {
				a.masks[2][3] = 0b001
			} else {
				a.masks[2][3] = 0
			}
		}},
		{"every chunk", func(a *Atlas) {
			for c := range a.masks[1] {
				a.masks[1][c] = 0b001
			}
		}},
	} {
		a := build()
		if err := a.Check(); err != nil {
			t.Fatal(err)
		}
		tc.spoil(a)
		err := a.Check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want %q, got %v", tc.want, err)
		}
	}
}
