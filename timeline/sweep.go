package timeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// SweepSchema is the only schema of a sweep file this package reads.
const SweepSchema = 1

// Sweep is a failure-likelihood sweep of one run (vopr branch -sweep): at
// each point of the run's virtual time, Branches runs branched off it with
// fresh randomness, and how many of them failed at all (Failed) and with
// the run's own violation name (Same). The file is one JSON object:
//
//	{"schema":1,"seed":17,"flags":["-replicas","3"],"violation":"name","branches":32,
//	 "points":[{"at_ns":1000000,"branches":32,"failed":3,"same":2}, ...]}
//
// vopr branch also writes the run's outcome, its length (end_ns) and the
// moment from which every branch failed as the run does (inevitable_ns,
// -1 when it found none); they are optional here. Fields this package does
// not know are ignored, so that a newer writer's additions do not break
// the page.
type Sweep struct {
	Schema       int          `json:"schema"`
	Seed         uint64       `json:"seed"`
	Flags        []string     `json:"flags"`
	Outcome      string       `json:"outcome"`
	Violation    string       `json:"violation"`
	Branches     int          `json:"branches"`
	EndNs        int64        `json:"end_ns"`
	InevitableNs *int64       `json:"inevitable_ns"` // nil: not given
	Points       []SweepPoint `json:"points"`
}

// Inevitable is the moment from which every branch failed as the run
// does, and whether the sweep found one.
func (s *Sweep) Inevitable() (int64, bool) {
	if s.InevitableNs == nil || *s.InevitableNs < 0 {
		return 0, false
	}
	return *s.InevitableNs, true
}

// SweepPoint is the branches from one moment of the run.
type SweepPoint struct {
	AtNs     int64 `json:"at_ns"`
	Branches int   `json:"branches"`
	Failed   int   `json:"failed"`
	Same     int   `json:"same"`
}

// Read reads a sweep file into s and checks it. Each error names the rule
// the file broke.
func (s *Sweep) Read(r io.Reader) error {
	dec := json.NewDecoder(r)
	var x Sweep
	if err := dec.Decode(&x); err != nil {
		return fmt.Errorf("sweep: not a JSON object of the sweep schema: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("sweep: more after the object: a sweep file is one JSON object")
	}
	if err := x.check(); err != nil {
		return err
	}
	*s = x
	return nil
}

// check holds a sweep to its rules.
func (s *Sweep) check() error {
	switch {
	case s.Schema != SweepSchema:
		return fmt.Errorf("sweep: schema %d: this vopr reads schema %d", s.Schema, SweepSchema)
	case s.Branches < 1:
		return fmt.Errorf("sweep: branches %d: a sweep branches at least once from each point", s.Branches)
	case len(s.Points) == 0:
		return errors.New("sweep: no points: a sweep has at least one point")
	case s.EndNs < 0:
		return fmt.Errorf("sweep: end_ns %d: the run's length is never negative", s.EndNs)
	case s.InevitableNs != nil && *s.InevitableNs < -1:
		return fmt.Errorf("sweep: inevitable_ns %d: a moment of the run, or -1 for none", *s.InevitableNs)
	}
	for i, p := range s.Points {
		at := fmt.Sprintf("sweep: point %d (at_ns %d)", i, p.AtNs)
		switch {
		case p.AtNs < 0:
			return fmt.Errorf("%s: at_ns is virtual time, never negative", at)
		case i > 0 && p.AtNs <= s.Points[i-1].AtNs:
			return fmt.Errorf("%s: the points go forward in time: at_ns must exceed the point before's %d", at, s.Points[i-1].AtNs)
		case p.Branches < 1 || p.Branches > s.Branches:
			return fmt.Errorf("%s: branches %d: a point has between 1 and the sweep's %d branches", at, p.Branches, s.Branches)
		case p.Failed < 0 || p.Failed > p.Branches:
			return fmt.Errorf("%s: failed %d: between 0 and the point's %d branches", at, p.Failed, p.Branches)
		case p.Same < 0 || p.Same > p.Failed:
			return fmt.Errorf("%s: same %d: same counts the failed branches that failed with the original violation, so 0 <= same <= failed (%d)", at, p.Same, p.Failed)
		}
	}
	return nil
}
