package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/iggy-vopr/vopr/sim"
)

// -json carries the evictions and the indefinite requests beyond the
// summary line's keys (the summary line itself keeps the fixed
// list), with the result's values, zero included.
func TestJSONEvictions(t *testing.T) {
	cases := []struct {
		name                  string
		evictions, indefinite uint64
	}{
		{"none", 0, 0},
		{"evicted while idle", 3, 0},
		{"evicted in flight", 5, 2},
	}
	for _, tc := range cases {
		sr := &seedRun{seed: 9, opts: sim.Swarm(9), result: sim.Result{Seed: 9, Options: sim.Swarm(9),
			Evictions: tc.evictions, Indefinite: tc.indefinite}}
		var b bytes.Buffer
		writeSeedJSON(&b, sr, "vopr -seed 9", &buildInfo{})
		var obj map[string]any
		if err := json.Unmarshal(b.Bytes(), &obj); err != nil {
			t.Fatalf("%s: %v: %s", tc.name, err, b.Bytes())
		}
		ev, okE := obj["evictions"].(float64)
		in, okI := obj["indefinite"].(float64)
		if !okE || !okI || uint64(ev) != tc.evictions || uint64(in) != tc.indefinite {
			t.Errorf("%s: evictions %v, indefinite %v; want %d, %d", tc.name, obj["evictions"], obj["indefinite"], tc.evictions, tc.indefinite)
		}
	}
}
