package timeline

import (
	"bytes"
	"html"
	"strconv"
)

// page is the HTML being written: a buffer with the helpers the lanes use.
// SVG numbers are integers wherever the scale allows (bucket indexes, µs),
// which keeps a 10 M-tick run's page small.
type page struct {
	bytes.Buffer
}

func (p *page) s(ss ...string) {
	for _, s := range ss {
		p.WriteString(s)
	}
}

// text writes s escaped for HTML.
func (p *page) text(s string) { p.WriteString(html.EscapeString(s)) }

func (p *page) int(v int64) { p.WriteString(strconv.FormatInt(v, 10)) }

func (p *page) num(v float64) { p.WriteString(strconv.FormatFloat(v, 'f', -1, 64)) }

// line writes an SVG line with a class and, when title is not empty, a
// tooltip.
func (p *page) line(cls string, x1, y1, x2, y2 int64, title string) {
	p.s(`<line class="`, cls, `" x1="`)
	p.int(x1)
	p.s(`" y1="`)
	p.int(y1)
	p.s(`" x2="`)
	p.int(x2)
	p.s(`" y2="`)
	p.int(y2)
	p.closeTitled("line", title)
}

// rect writes an SVG rect.
func (p *page) rect(cls string, x, y, w, h int64, title string) {
	p.s(`<rect class="`, cls, `" x="`)
	p.int(x)
	p.s(`" y="`)
	p.int(y)
	p.s(`" width="`)
	p.int(max(w, 0))
	p.s(`" height="`)
	p.int(h)
	p.closeTitled("rect", title)
}

func (p *page) closeTitled(tag, title string) {
	if title == "" {
		p.s(`"/>`)
		return
	}
	p.s(`"><title>`)
	p.text(title)
	p.s(`</title></`, tag, `>`)
}

// step is a value held over [From, To) (in the plot's x units).
type step struct {
	From, To int64
	V        uint64
}

// stepper turns a value over time into steps, a new one only when the
// value changes.
type stepper struct {
	from  int64
	v     uint64
	steps []step
}

func newStepper(from int64, v uint64) *stepper { return &stepper{from: from, v: v} }

// set holds v from x on.
func (s *stepper) set(x int64, v uint64) {
	if v == s.v {
		return
	}
	if x > s.from {
		s.steps = append(s.steps, step{s.from, x, s.v})
	}
	s.from, s.v = x, v
}

// end closes the last step at x and returns the steps.
func (s *stepper) end(x int64) []step {
	if x > s.from {
		s.steps = append(s.steps, step{s.from, x, s.v})
	}
	return s.steps
}

// stepPath writes steps as one SVG path: y(v) for each, joined by
// vertical moves.
func (p *page) stepPath(cls string, steps []step, y func(uint64) int64) {
	if len(steps) == 0 {
		return
	}
	p.s(`<path class="`, cls, `" d="M`)
	p.int(steps[0].From)
	p.s(" ")
	p.int(y(steps[0].V))
	prevY := y(steps[0].V)
	for i, st := range steps {
		if yy := y(st.V); i > 0 && yy != prevY {
			p.s("V")
			p.int(yy)
			prevY = yy
		}
		p.s("H")
		p.int(st.To)
	}
	p.s(`"/>`)
}

// scale maps 0..top to the pixel rows [bottom-height, bottom], upwards.
func scale(bottom, height int64, top uint64) func(uint64) int64 {
	top = max(top, 1)
	return func(v uint64) int64 {
		return bottom - int64(float64(min(v, top))/float64(top)*float64(height)+0.5)
	}
}

// runs calls f for each stretch of equal keys in keys[0:n], as [from, to).
func runs[K comparable](n int, key func(i int) K, f func(from, to int, k K)) {
	for i := 0; i < n; {
		k := key(i)
		j := i + 1
		for j < n && key(j) == k {
			j++
		}
		f(i, j, k)
		i = j
	}
}

// token makes a word from the trace (a kind, a command, an outcome) safe
// as a class name: letters, digits, '_' and '-' only, anything else '_'.
// The simulator writes only such words; a hand-edited trace need not.
func token(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}
