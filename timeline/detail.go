package timeline

import (
	"fmt"
	"strconv"
)

// detailUnitsMax bounds the detail plot's width in its x units.
const detailUnitsMax = 16_000_000

// detailSeries is one replica's lane in the window, rebuilt by walking its
// events from the state the window began with.
type detailSeries struct {
	status, paused, away, view, logView, op, commit *stepper
}

// walk replays the window: every lane's steps, from Detail.Start over
// Detail.Events, in the window's x units.
func (t *Timeline) walk(x func(int64) int64) ([]detailSeries, []step) {
	d := &t.Detail
	st := d.Start.snapshot()
	series := make([]detailSeries, len(st.Replicas))
	for i := range st.Replicas {
		s := &st.Replicas[i]
		series[i] = detailSeries{
			status: newStepper(0, uint64(s.Status)), paused: newStepper(0, b2u(s.Paused)), away: newStepper(0, uint64(s.GroupsAway)),
			view: newStepper(0, uint64(s.View)), logView: newStepper(0, uint64(s.LogView)), op: newStepper(0, s.Op), commit: newStepper(0, s.Commit),
		}
	}
	partitioned := newStepper(0, b2u(st.Network.Partitioned))
	for i := range d.Events {
		e := &d.Events[i]
		st.apply(e)
		at := x(e.AtNs)
		switch {
		case e.Replica >= 0 && e.Replica < len(series):
			s, ds := &st.Replicas[e.Replica], &series[e.Replica]
			ds.status.set(at, uint64(s.Status))
			ds.paused.set(at, b2u(s.Paused))
			ds.away.set(at, uint64(s.GroupsAway))
			ds.view.set(at, uint64(s.View))
			ds.logView.set(at, uint64(s.LogView))
			ds.op.set(at, s.Op)
			ds.commit.set(at, s.Commit)
		case e.Replica < 0 && e.Client < 0:
			partitioned.set(at, b2u(st.Network.Partitioned))
		}
	}
	end := x(t.EndNs)
	for i := range series {
		s := &series[i]
		for _, p := range []*stepper{s.status, s.paused, s.away, s.view, s.logView, s.op, s.commit} {
			p.steps = p.end(end)
		}
	}
	return series, partitioned.end(end)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// writeDetail draws the window: every event as a tick with its tooltip,
// the lanes' exact steps, each client request from invocation to
// completion, and each frame as an arrow from its sender's lane (when it
// was sent) to its receiver's (when it arrived), a bar marking that end.
func (t *Timeline) writeDetail(p *page) {
	d := &t.Detail
	ls, height := t.lanes(false)
	// The x unit is a microsecond, or coarser for a window longer than
	// 16 s: Chromium clamps an SVG rect's x and width to about 2^25 (a
	// status held across a longer window in µs was cut short).
	unit := max(int64(1000), (t.EndNs-d.StartNs+detailUnitsMax-1)/detailUnitsMax)
	width := max((t.EndNs-d.StartNs+unit-1)/unit, 1)
	x := func(ns int64) int64 { return (ns - d.StartNs) / unit }
	p.s(`<section id="detail"><h2>The end of the run in detail</h2><p class="note">`)
	events := 0
	for i := range d.Events {
		if !d.Events[i].Derived {
			events++
		}
	}
	what := fmt.Sprintf("%d events from %s to the end (%s)", events, Seconds(d.StartNs), Seconds(t.EndNs))
	if d.EventsBefore > 0 {
		what += fmt.Sprintf("; the %d events before are in the overview only", d.EventsBefore)
	}
	what += fmt.Sprintf(". %d messages between replicas", len(d.Frames))
	if d.FramesBefore > 0 {
		what += fmt.Sprintf(" from %s (the %d before are not kept)", Seconds(d.FramesFromNs), d.FramesBefore)
	}
	what += ", each an arrow from its sender when sent to its receiver when delivered (the bar); zoom in to tell them apart. Evidence red, hover for each event."
	p.text(what)
	p.s("</p>\n")
	t.chartOpen(p, "detail-chart", ls, height, d.StartNs, float64(unit), width)
	series, partitioned := t.walk(x)
	var opTop, viewTop uint64
	for i := range series {
		for _, s := range series[i].op.steps {
			opTop = max(opTop, s.V)
		}
		for _, s := range series[i].commit.steps {
			opTop = max(opTop, s.V)
		}
		for _, s := range series[i].view.steps {
			viewTop = max(viewTop, s.V)
		}
		for _, s := range series[i].logView.steps {
			viewTop = max(viewTop, s.V)
		}
	}
	var replicaLanes, clientLanes []*lane
	var network *lane
	for i := range ls {
		switch ls[i].kind {
		case laneNetwork:
			network = &ls[i]
		case laneReplica:
			replicaLanes = append(replicaLanes, &ls[i])
		case laneClient:
			clientLanes = append(clientLanes, &ls[i])
		}
	}
	for _, s := range partitioned {
		if s.V != 0 {
			p.rect("partition", s.From, network.y+3, s.To-s.From, 9, "")
		}
	}
	for i, l := range replicaLanes {
		s := &series[i]
		for _, st := range s.status.steps {
			p.rect("s"+strconv.FormatUint(st.V, 10), st.From, l.y+statusTop, st.To-st.From, statusHeight,
				l.label+" "+StatusName(uint8(st.V))+" from "+Seconds(d.StartNs+st.From*unit))
		}
		for _, st := range s.paused.steps {
			if st.V != 0 {
				p.rect("paused", st.From, l.y+statusTop+statusHeight, st.To-st.From, 4, l.label+" paused")
			}
		}
		for _, st := range s.away.steps {
			if st.V != 0 {
				p.rect("away", st.From, l.y+statusTop+statusHeight+5, st.To-st.From, 3,
					fmt.Sprintf("%s: %d partition groups not normal", l.label, st.V))
			}
		}
		yOp := scale(l.y+plotBottom, plotBottom-plotTop, opTop)
		yView := scale(l.y+plotBottom, plotBottom-plotTop, viewTop)
		p.stepPath("logview", s.logView.steps, yView)
		p.stepPath("view", s.view.steps, yView)
		p.stepPath("commit", s.commit.steps, yOp)
		p.stepPath("op", s.op.steps, yOp)
	}
	for _, q := range d.Requests {
		if q.Client >= len(clientLanes) {
			continue
		}
		l := clientLanes[q.Client]
		done, outcome := q.DoneNs, q.Outcome
		if done < 0 {
			done, outcome = t.EndNs, "open"
		}
		title := fmt.Sprintf("%s request %d %s: %s, invoked %s, ", l.label, q.Request, q.Operation, outcome, Seconds(q.InvokedNs))
		if q.DoneNs >= 0 {
			title += "done " + Seconds(q.DoneNs)
		} else {
			title += "still open at the end"
		}
		if q.Timeouts > 0 {
			title += ", " + plural(uint64(q.Timeouts), "timeout")
		}
		from := x(max(q.InvokedNs, d.StartNs))
		p.rect("rq o-"+token(outcome), from, l.y+4, max(x(done)-from, 1), 10, title)
	}
	for i := range d.Events {
		e := &d.Events[i]
		if e.Derived {
			continue
		}
		cls := "k-" + token(e.Kind)
		if e.Group != 0 {
			cls = "pg"
		}
		if t.cited(e) {
			cls += " cite"
		} else if t.Named.names(e) {
			cls += " named"
		}
		at := x(e.AtNs)
		var y0, y1 int64
		switch {
		case e.Replica >= 0 && e.Replica < len(replicaLanes):
			l := replicaLanes[e.Replica]
			switch {
			case e.Kind == "crash" || e.Kind == "restart" || e.Kind == "freeze" || e.Kind == "pause" || e.Kind == "resume":
				y0, y1 = l.y, l.y+l.h
			case e.Kind == "storage_fault":
				y0, y1 = l.y+l.h-6, l.y+l.h
			case e.Group != 0:
				y0, y1 = l.y+statusTop+statusHeight+9, l.y+plotTop-1
			default:
				y0, y1 = l.y+statusTop, l.y+plotTop-1
			}
		case e.Client >= 0 && e.Client < len(clientLanes):
			l := clientLanes[e.Client]
			y0, y1 = l.y, l.y+l.h
		case e.Replica < 0 && e.Client < 0:
			y0, y1 = network.y+13, network.y+network.h
			if e.Kind == "phase" {
				y0, y1 = 0, height
			}
		default:
			continue
		}
		p.line(cls, at, y0, at, y1, e.Title(t.Replicas))
	}
	p.s(`<g class="frames">`)
	for i := range d.Frames {
		f := &d.Frames[i]
		if f.From >= len(replicaLanes) || f.To >= len(replicaLanes) {
			continue
		}
		from, to := replicaLanes[f.From], replicaLanes[f.To]
		x1, x2 := x(f.AtNs), x(f.AtNs)
		sent := "sent at an unknown time"
		if f.SentNs >= 0 {
			x1, sent = x(f.SentNs), "sent "+Seconds(f.SentNs)
		}
		cls := "f f-" + token(f.Command)
		if t.Named.namesFrame(f) {
			cls += " named"
		}
		title := fmt.Sprintf("%s replica %d → replica %d", f.Command, f.From, f.To)
		if f.Group != 0 {
			title += fmt.Sprintf(" group %d", f.Group)
		}
		title += fmt.Sprintf(" view %d", f.View)
		if f.Op != 0 {
			title += fmt.Sprintf(" op %d", f.Op)
		}
		title += ", " + sent + ", delivered " + Seconds(f.AtNs)
		y1, y2 := from.mid(), to.mid()
		p.s(`<path class="`, cls, `" d="M`)
		p.int(x1)
		p.s(" ")
		p.int(y1)
		p.s("L")
		p.int(x2)
		p.s(" ")
		p.int(y2)
		p.s("M")
		p.int(x2)
		p.s(" ")
		p.int(y2 - 5)
		p.s("V")
		p.int(y2 + 5)
		p.closeTitled("path", title)
	}
	p.s(`</g>`)
	if t.ViolationAtNs >= d.StartNs && t.ViolationAtNs > 0 {
		vx := x(t.ViolationAtNs)
		p.line("viol", vx, 0, vx, height, "violation at "+Seconds(t.ViolationAtNs)+": "+t.Violation)
	}
	chartClose(p)
	p.s("</section>\n")
}
