package timeline

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Lane heights and the label column, in pixels. The plots scale only
// horizontally (preserveAspectRatio none), so a lane's y is its pixels.
const (
	labelWidth  = 150
	axisHeight  = 18
	likelihoodH = 72
	networkH    = 26
	replicaH    = 68
	clientH     = 18
	laneGap     = 4
	// Within a replica lane: the status band from statusTop, statusHeight
	// high (the strips and marks below it), and the plot of op, commit,
	// view and log_view from plotTop to plotBottom.
	statusTop    = 2
	statusHeight = 10
	plotTop      = 30
	plotBottom   = 62
)

// laneKind says what a lane draws.
type laneKind uint8

const (
	laneLikelihood laneKind = iota
	laneNetwork
	laneReplica
	laneClient
)

// lane is one row of a chart.
type lane struct {
	kind   laneKind
	index  int // the replica's or client's
	y, h   int64
	label  string
	sub    string
	marked bool // the violation names it
}

// mid is the lane's middle row, where messages start and end.
func (l *lane) mid() int64 { return l.y + (plotTop+plotBottom)/2 }

// lanes lays the chart out: the likelihood lane (overview only, with a
// sweep), the network, the replicas, then the clients, so that messages
// between replicas cross only replica lanes.
func (t *Timeline) lanes(overview bool) ([]lane, int64) {
	var ls []lane
	y := int64(0)
	add := func(l lane) {
		l.y = y
		ls = append(ls, l)
		y += l.h + laneGap
	}
	if overview && t.Sweep != nil {
		sub := fmt.Sprintf("%d branches a point", t.Sweep.Branches)
		if at, ok := t.Sweep.Inevitable(); ok {
			sub = "inevitable from " + Seconds(at)
		}
		add(lane{kind: laneLikelihood, h: likelihoodH, label: "failure likelihood", sub: sub})
	}
	add(lane{kind: laneNetwork, h: networkH, label: "network", sub: "partitions, clogs, resets"})
	for i := range t.Replicas {
		add(lane{kind: laneReplica, index: i, h: replicaH, label: "replica " + strconv.Itoa(i), marked: t.namesReplica(i)})
	}
	for i := range t.Clients {
		add(lane{kind: laneClient, index: i, h: clientH, label: "client " + strconv.Itoa(i)})
	}
	return ls, y
}

func (t *Timeline) namesReplica(i int) bool {
	for _, r := range t.Named.Replicas {
		if r == i {
			return true
		}
	}
	return false
}

// WriteHTML writes the timeline as one self-contained HTML page: inline
// style and script, no resource from anywhere else. The lanes are SVG in
// the markup; the script only zooms and pans.
func (t *Timeline) WriteHTML(w io.Writer) error {
	p := &page{}
	p.Grow(1 << 20)
	p.s("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>")
	p.text(fmt.Sprintf("vopr timeline: seed %d, %s", t.Seed, t.Outcome))
	p.s("</title>\n<style>", pageStyle, "</style>\n</head>\n<body>\n")
	t.writeHeader(p)
	t.writeOverview(p)
	t.writeDetail(p)
	p.s("<script>", pageScript, "</script>\n</body>\n</html>\n")
	_, err := w.Write(p.Bytes())
	return err
}

func (t *Timeline) writeHeader(p *page) {
	p.s(`<header><h1>vopr timeline · seed `, strconv.FormatUint(t.Seed, 10), ` · <span class="outcome o-`, token(t.Outcome), `">`)
	p.text(t.Outcome)
	p.s("</span>")
	if t.ViolationName != "" {
		p.s(` · <span class="vname">`)
		p.text(t.ViolationName)
		p.s("</span>")
	}
	p.s("</h1>\n")
	if t.Command != "" {
		p.s(`<p class="cmd">reproduce: <code>`)
		p.text(t.Command)
		p.s("</code></p>\n")
	}
	if t.Violation != "" {
		p.s(`<p class="violation" id="violation">`)
		if t.ViolationAtNs > 0 {
			p.s("found at ")
			p.text(Seconds(t.ViolationAtNs))
			p.s(": ")
		}
		p.text(t.Violation)
		p.s("</p>\n")
	}
	p.s(`<p class="summary"><code>`)
	p.text(t.Summary)
	p.s("</code></p>\n")
	if len(t.Evidence) > 0 {
		p.s(`<details class="evidence"><summary>evidence: `, strconv.Itoa(len(t.Evidence)),
			` lines, the checker's last events before the failure (marked red in the lanes)</summary><ol>`)
		for _, l := range t.Evidence {
			p.s("<li>")
			p.text(l)
			p.s("</li>")
		}
		p.s("</ol></details>\n")
	}
	p.s(`<p class="note">`)
	p.text(fmt.Sprintf("Drawn from %d trace lines and %d messages between replicas.", t.Lines, t.Detail.FramesBefore+len(t.Detail.Frames)))
	p.s("</p>\n")
	if t.BadLines > 0 {
		p.s(`<p class="warn">`)
		p.text(fmt.Sprintf("%d of %d trace lines could not be read (%s)", t.BadLines, t.Lines, t.FirstBad))
		p.s("</p>\n")
	}
	p.s(legend)
	if t.Sweep != nil {
		p.s(legendSweep)
	}
	p.s("</div>\n")
}

// chartOpen starts a chart: the label column, the axis and the plot's
// SVG, whose x runs over [0, width) units of unitNs each from t0Ns.
func (t *Timeline) chartOpen(p *page, id string, ls []lane, height int64, t0Ns int64, unitNs float64, width int64) {
	t1 := float64(t0Ns) + unitNs*float64(width)
	p.s(`<div class="chart" id="`, id, `" data-t0="`)
	p.int(t0Ns)
	p.s(`" data-unit="`)
	p.num(unitNs)
	p.s(`" data-w="`)
	p.int(width)
	p.s(`" data-h="`)
	p.int(height)
	if t.ViolationAtNs > 0 {
		p.s(`" data-viol="`)
		p.int(t.ViolationAtNs)
	}
	p.s(`"><div class="row"><svg class="labels" width="`, strconv.Itoa(labelWidth), `" height="`)
	p.int(height + axisHeight)
	p.s(`">`)
	for _, l := range ls {
		cls := "lane-label"
		if l.marked {
			cls += " marked"
		}
		p.s(`<text class="`, cls, `" x="4" y="`)
		p.int(axisHeight + l.y + 13)
		p.s(`">`)
		p.text(l.label)
		p.s(`</text>`)
		if l.sub != "" {
			p.s(`<text class="lane-sub" x="4" y="`)
			p.int(axisHeight + l.y + 26)
			p.s(`">`)
			p.text(l.sub)
			p.s(`</text>`)
		}
	}
	p.s(`</svg><div class="plots"><svg class="axis" width="100%" height="`, strconv.Itoa(axisHeight), `">`)
	for _, tk := range axisTicks(float64(t0Ns), t1) {
		p.s(`<text`, anchor(tk.pct), ` x="`)
		p.num(math.Round(tk.pct*100) / 100)
		p.s(`%" y="12">`, tk.label, `</text>`)
	}
	if v := float64(t.ViolationAtNs); t.ViolationAtNs > 0 && v >= float64(t0Ns) && v <= t1 {
		p.s(`<text class="vmark" x="`)
		p.num(math.Round((v-float64(t0Ns))/(t1-float64(t0Ns))*10000) / 100)
		p.s(`%" y="17">▼</text>`)
	}
	p.s(`</svg><svg class="plot" viewBox="0 0 `)
	p.int(width)
	p.s(" ")
	p.int(height)
	p.s(`" preserveAspectRatio="none" width="100%" height="`)
	p.int(height)
	p.s(`">`)
	for _, l := range ls {
		p.rect("lanebg", 0, l.y, width, l.h, "")
	}
}

func chartClose(p *page) {
	p.s("</svg></div></div><div class=\"readout\"></div></div>\n")
}

// anchor keeps a label at either edge of the axis inside it.
func anchor(pct float64) string {
	switch {
	case pct < 3:
		return ` text-anchor="start"`
	case pct > 97:
		return ` text-anchor="end"`
	}
	return ""
}

// tick is one label of a time axis, at pct of its width.
type tick struct {
	pct   float64
	label string
}

// axisTicks labels [t0, t1] ns with some eight round times; the page's
// script computes the same when it zooms.
func axisTicks(t0, t1 float64) []tick {
	span := t1 - t0
	if span <= 0 {
		return nil
	}
	raw := span / 8
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	m := raw / pow
	stepNs := pow * 10
	switch {
	case m < 1.5:
		stepNs = pow
	case m < 3.5:
		stepNs = pow * 2
	case m < 7.5:
		stepNs = pow * 5
	}
	decimals := max(0, int(math.Ceil(-math.Log10(stepNs/1e9))))
	var out []tick
	for v := math.Ceil(t0/stepNs) * stepNs; v <= t1; v += stepNs {
		out = append(out, tick{pct: (v - t0) / span * 100, label: strconv.FormatFloat(v/1e9, 'f', decimals, 64) + "s"})
	}
	return out
}

// writeOverview draws the whole run from its buckets. Its x unit is half
// a bucket, so that a bucket's middle is a whole number.
func (t *Timeline) writeOverview(p *page) {
	ls, height := t.lanes(true)
	n := t.Buckets
	width := int64(2 * n)
	p.s(`<section id="overview"><h2>The whole run</h2><p class="note">`)
	p.text(fmt.Sprintf("0 to %s in %d buckets of %s each: a bucket is drawn in the status it spent the most time in (the worst it saw, when another, in the strip below), op as its range (band) and last value (line), "+
		"commit, view and log_view as their last values; marks count what happened in it. Hover for the numbers; wheel to zoom, drag to pan, double-click to reset.",
		Seconds(t.EndNs), n, durationWords(t.BucketNs)))
	p.s("</p>\n")
	unit := float64(t.BucketNs) / 2
	t.chartOpen(p, "overview-chart", ls, height, 0, unit, width)
	x := func(ns int64) int64 { return int64(math.Round(float64(ns) / unit)) }
	if t.Detail.StartNs > 0 {
		p.rect("window", x(t.Detail.StartNs), 0, width-x(t.Detail.StartNs), height,
			"the detail window below: from "+Seconds(t.Detail.StartNs))
	}
	var opTop, viewTop uint64
	for _, bs := range t.ReplicaLanes {
		for i := range bs {
			opTop = max(opTop, bs[i].Op.Max, bs[i].Commit.Max)
			viewTop = max(viewTop, bs[i].View.Max, bs[i].LogView.Max)
		}
	}
	span := func(from, to int) string {
		return Seconds(int64(from)*t.BucketNs) + "–" + Seconds(int64(to)*t.BucketNs) + " "
	}
	for li := range ls {
		l := &ls[li]
		switch l.kind {
		case laneLikelihood:
			t.overviewLikelihood(p, l, unit)
		case laneNetwork:
			bs := t.Network
			runs(n, func(i int) bool { return bs[i].Partitioned }, func(a, b int, on bool) {
				if on {
					p.rect("partition", int64(2*a), l.y+3, int64(2*(b-a)), 9, "")
				}
			})
			for i := range bs {
				b := &bs[i]
				c := int64(2*i + 1)
				if b.Clogs > 0 {
					p.line("k-clog", c, l.y+13, c, l.y+18, "")
				}
				if b.Resets > 0 {
					p.line("k-connection_reset", c, l.y+18, c, l.y+23, "")
				}
				if b.Corrupted > 0 || b.Nemesis > 0 {
					p.line("k-frame_corrupted", c, l.y+13, c, l.y+23, "")
				}
			}
			runs(n, func(i int) string { return networkWords(&bs[i]) }, func(a, b int, s string) {
				p.rect("hit", int64(2*a), l.y, int64(2*(b-a)), l.h, span(a, b)+"network: "+s)
			})
		case laneReplica:
			t.overviewReplica(p, l, opTop, viewTop, span)
		case laneClient:
			bs := t.ClientLanes[l.index]
			runs(n, func(i int) bool { return bs[i].InFlight }, func(a, b int, on bool) {
				if on {
					p.rect("inflight", int64(2*a), l.y+4, int64(2*(b-a)), 10, "")
				}
			})
			for i := range bs {
				b := &bs[i]
				c := int64(2*i + 1)
				switch {
				case b.Indefinite > 0:
					p.line("k-indefinite", c, l.y+1, c, l.y+17, "")
				case b.Denied > 0:
					p.line("k-denied", c, l.y+1, c, l.y+17, "")
				case b.Replied > 0:
					p.line("k-replied", c, l.y+1, c, l.y+17, "")
				}
				if b.Timeouts > 0 {
					p.line("k-client_timeout", c, l.y+12, c, l.y+17, "")
				}
				if b.Evidence {
					p.line("cite", c, l.y, c, l.y+6, "")
				}
			}
			runs(n, func(i int) string { return clientWords(&bs[i]) }, func(a, b int, s string) {
				p.rect("hit", int64(2*a), l.y, int64(2*(b-a)), l.h, span(a, b)+l.label+": "+s)
			})
		}
	}
	for i := range t.Network {
		if t.Network[i].Liveness {
			c := int64(2*i + 1)
			p.line("liveness", c, 0, c, height, "the liveness phase begins in "+span(i, i+1))
		}
	}
	if t.ViolationAtNs > 0 {
		vx := x(t.ViolationAtNs)
		p.line("viol", vx, 0, vx, height, "violation at "+Seconds(t.ViolationAtNs)+": "+t.Violation)
	}
	chartClose(p)
	p.s("</section>\n")
}

func (t *Timeline) overviewReplica(p *page, l *lane, opTop, viewTop uint64, span func(a, b int) string) {
	bs := t.ReplicaLanes[l.index]
	n := len(bs)
	// The band is the status the bucket spent the most time in, the
	// strip under it the worst one it saw when that differs: a 40-second
	// bucket of a long run with a crash in it is mostly up.
	runs(n, func(i int) uint8 { return bs[i].Dominant() }, func(a, b int, s uint8) {
		p.rect("s"+strconv.Itoa(int(s)), int64(2*a), l.y+statusTop, int64(2*(b-a)), statusHeight-1, "")
	})
	runs(n, func(i int) uint8 {
		if w := bs[i].Worst; w != bs[i].Dominant() {
			return w
		}
		return statusCount
	}, func(a, b int, s uint8) {
		if s != statusCount {
			p.rect("s"+strconv.Itoa(int(s)), int64(2*a), l.y+statusTop+statusHeight-1, int64(2*(b-a)), 3, "")
		}
	})
	runs(n, func(i int) bool { return bs[i].Paused }, func(a, b int, on bool) {
		if on {
			p.rect("paused", int64(2*a), l.y+statusTop+statusHeight+2, int64(2*(b-a)), 3, "")
		}
	})
	runs(n, func(i int) bool { return bs[i].GroupsAway.Max > 0 }, func(a, b int, on bool) {
		if on {
			p.rect("away", int64(2*a), l.y+statusTop+statusHeight+5, int64(2*(b-a)), 3, "")
		}
	})
	yOp := scale(l.y+plotBottom, plotBottom-plotTop, opTop)
	yView := scale(l.y+plotBottom, plotBottom-plotTop, viewTop)
	// The op band: each bucket whose op moved, from its least to its
	// greatest, one path of rectangles.
	p.s(`<path class="opband" d="`)
	for i := range bs {
		if s := bs[i].Op; s.Min != s.Max {
			p.s("M")
			p.int(int64(2 * i))
			p.s(" ")
			p.int(yOp(s.Max))
			p.s("h2V")
			p.int(yOp(s.Min))
			p.s("h-2Z")
		}
	}
	p.s(`"/>`)
	for _, series := range []struct {
		cls string
		v   func(b *ReplicaBucket) uint64
		y   func(uint64) int64
	}{
		{"logview", func(b *ReplicaBucket) uint64 { return b.LogView.Last }, yView},
		{"view", func(b *ReplicaBucket) uint64 { return b.View.Last }, yView},
		{"commit", func(b *ReplicaBucket) uint64 { return b.Commit.Last }, yOp},
		{"op", func(b *ReplicaBucket) uint64 { return b.Op.Last }, yOp},
	} {
		st := newStepper(0, series.v(&bs[0]))
		for i := range bs {
			st.set(int64(2*i), series.v(&bs[i]))
		}
		p.stepPath(series.cls, st.end(int64(2*n)), series.y)
	}
	// Marks in a row of their own between the bands and the plot, so that
	// a long run's thousands of crashes do not hide the lines: a crash in
	// the upper half, a restart in the lower, a freeze across.
	marks := l.y + statusTop + statusHeight + 9
	for i := range bs {
		b := &bs[i]
		c := int64(2*i + 1)
		if b.DiskFaults > 0 {
			p.line("k-storage_fault", c, l.y+l.h-5, c, l.y+l.h, "")
		}
		if b.Restarts > 0 {
			p.line("k-restart", c, marks+4, c, marks+8, "")
		}
		if b.Crashes > 0 {
			p.line("k-crash", c, marks, c, marks+4, "")
		}
		if b.Freezes > 0 {
			p.line("k-freeze", c, marks, c, marks+8, "")
		}
		if b.Evidence {
			p.line("cite", c, l.y, c, l.y+8, "")
		}
	}
	runs(n, func(i int) string { return replicaWords(&bs[i]) }, func(a, b int, s string) {
		p.rect("hit", int64(2*a), l.y, int64(2*(b-a)), l.h, span(a, b)+l.label+": "+s)
	})
}

// overviewLikelihood draws the sweep: the share of branches that failed
// (light) and that failed with the run's violation (dark), as steps from
// each point to the next.
func (t *Timeline) overviewLikelihood(p *page, l *lane, unit float64) {
	s := t.Sweep
	bottom, h := float64(l.y+l.h-4), float64(l.h-8)
	x := func(ns int64) string { return strconv.FormatFloat(math.Round(float64(ns)/unit*100)/100, 'f', -1, 64) }
	y := func(num, den int) string {
		return strconv.FormatFloat(math.Round((bottom-float64(num)/float64(max(den, 1))*h)*10)/10, 'f', -1, 64)
	}
	end := max(t.EndNs, s.Points[len(s.Points)-1].AtNs)
	for _, g := range []int64{0, 50, 100} {
		p.line("grid", 0, int64(bottom-float64(g)/100*h+0.5), int64(2*t.Buckets), int64(bottom-float64(g)/100*h+0.5), "")
	}
	for _, series := range []struct {
		cls string
		v   func(q *SweepPoint) int
	}{{"lk-failed", func(q *SweepPoint) int { return q.Failed }}, {"lk-same", func(q *SweepPoint) int { return q.Same }}} {
		var d strings.Builder
		d.WriteString("M" + x(s.Points[0].AtNs) + " " + y(0, 1))
		for i := range s.Points {
			q := &s.Points[i]
			next := end
			if i+1 < len(s.Points) {
				next = s.Points[i+1].AtNs
			}
			d.WriteString("V" + y(series.v(q), q.Branches) + "H" + x(next))
		}
		d.WriteString("V" + y(0, 1) + "Z")
		p.s(`<path class="`, series.cls, `" d="`, d.String(), `"/>`)
	}
	if at, ok := s.Inevitable(); ok {
		p.s(`<line class="inevitable" x1="`, x(at), `" y1="`)
		p.int(l.y)
		p.s(`" x2="`, x(at), `" y2="`)
		p.int(l.y + l.h)
		p.closeTitled("line", "inevitable from "+Seconds(at)+": every branch from there fails as the run does")
	}
	for i := range s.Points {
		q := &s.Points[i]
		next := end
		if i+1 < len(s.Points) {
			next = s.Points[i+1].AtNs
		}
		title := fmt.Sprintf("branching at %s: %d of %d branches failed (%.1f%%), %d with %s (%.1f%%)",
			Seconds(q.AtNs), q.Failed, q.Branches, pct(q.Failed, q.Branches), q.Same, orName(s.Violation), pct(q.Same, q.Branches))
		p.s(`<rect class="hit" x="`, x(q.AtNs), `" y="`)
		p.int(l.y)
		p.s(`" width="`)
		p.num(math.Max(0, math.Round((float64(next)-float64(q.AtNs))/unit*100)/100))
		p.s(`" height="`)
		p.int(l.h)
		p.closeTitled("rect", title)
	}
}

func pct(a, b int) float64 { return float64(a) / float64(max(b, 1)) * 100 }

func orName(v string) string {
	if v == "" {
		return "the run's violation"
	}
	return "the run's violation (" + v + ")"
}

// replicaWords is a replica bucket in words, for its tooltip (buckets of
// equal words share one).
func replicaWords(b *ReplicaBucket) string {
	var w []string
	var ss []string
	for s := range statusCount {
		if b.Statuses&(1<<s) != 0 {
			ss = append(ss, StatusName(s))
		}
	}
	w = append(w, strings.Join(ss, ", "))
	if b.Paused {
		w = append(w, "paused")
	}
	w = append(w, "view "+spanWords(b.View), "log_view "+spanWords(b.LogView), "op "+spanWords(b.Op), "commit "+spanWords(b.Commit))
	if b.GroupsAway.Max > 0 {
		w = append(w, fmt.Sprintf("up to %d partition groups not normal", b.GroupsAway.Max))
	}
	for _, c := range []struct {
		n    uint64
		what string
	}{{uint64(b.Crashes), "crash"}, {uint64(b.Restarts), "restart"}, {uint64(b.Freezes), "freeze"}, {uint64(b.Pauses), "pause"},
		{b.DiskFaults, "sector fault"}, {uint64(b.Events), "event"}} {
		if c.n > 0 {
			w = append(w, plural(c.n, c.what))
		}
	}
	if b.Evidence {
		w = append(w, "named in the evidence")
	}
	return strings.Join(w, " · ")
}

func clientWords(b *ClientBucket) string {
	var w []string
	if b.InFlight {
		w = append(w, "a request in flight")
	} else {
		w = append(w, "idle")
	}
	for _, c := range []struct {
		n    int
		what string
	}{{b.Invokes, "invocation"}, {b.Replied, "reply"}, {b.Denied, "denial"}, {b.Indefinite, "indefinite outcome"}, {b.Timeouts, "timeout"}} {
		if c.n > 0 {
			w = append(w, plural(uint64(c.n), c.what))
		}
	}
	if b.Evidence {
		w = append(w, "named in the evidence")
	}
	return strings.Join(w, " · ")
}

func networkWords(b *NetworkBucket) string {
	var w []string
	if b.Partitioned {
		w = append(w, "partitioned")
	} else {
		w = append(w, "no partition")
	}
	for _, c := range []struct {
		n    uint64
		what string
	}{{uint64(b.Partitions), "partition"}, {uint64(b.Heals), "heal"}, {b.Clogs, "clog"}, {b.Resets, "connection reset"},
		{b.Corrupted, "corrupted frame"}, {uint64(b.Nemesis), "nemesis move"}} {
		if c.n > 0 {
			w = append(w, plural(c.n, c.what))
		}
	}
	if b.Liveness {
		w = append(w, "the liveness phase begins")
	}
	return strings.Join(w, " · ")
}

func spanWords(s Span) string {
	if s.Min == s.Max {
		return strconv.FormatUint(s.Last, 10)
	}
	return fmt.Sprintf("%d..%d (last %d)", s.Min, s.Max, s.Last)
}

func plural(n uint64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "y") && !strings.HasSuffix(what, "ay") {
		return strconv.FormatUint(n, 10) + " " + what[:len(what)-1] + "ies"
	}
	if strings.HasSuffix(what, "sh") || strings.HasSuffix(what, "s") {
		return strconv.FormatUint(n, 10) + " " + what + "es"
	}
	return strconv.FormatUint(n, 10) + " " + what + "s"
}

// durationWords is a bucket width for people: 10ms, 2.56s.
func durationWords(ns int64) string {
	switch {
	case ns >= 1e9:
		return strconv.FormatFloat(float64(ns)/1e9, 'f', -1, 64) + "s"
	case ns >= 1e6:
		return strconv.FormatFloat(float64(ns)/1e6, 'f', -1, 64) + "ms"
	}
	return strconv.FormatFloat(float64(ns)/1e3, 'f', -1, 64) + "µs"
}
