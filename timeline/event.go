package timeline

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Event is one line of the trace as the timeline keeps it: who it happened
// to (a replica, a client, or the network when neither), the lane state it
// carries, and the rest of the line in words for a tooltip.
type Event struct {
	AtNs    int64
	Kind    string
	Replica int // -1: not a replica's
	Client  int // the client's index; -1: not a client's
	// Group is the partition group of a replica event (0: the metadata
	// plane, which is what a replica's lane draws).
	Group   uint64
	Status  string
	View    uint32
	LogView uint32
	Op      uint64
	Commit  uint64
	Request uint64
	// Operation (client_invoke), Outcome (client_complete: replied,
	// denied or indefinite) and Count (a fault line's count) are also in
	// Text, in words.
	Operation string
	Outcome   string
	Count     uint64
	// Derived: not a trace line but what a frame said about its sender
	// (a prepare_ok of op N: the sender holds op N), kept in the window so
	// that the lane state rebuilt from it is the state the run had.
	Derived bool
	Text    string
}

// traceLine mirrors sim's trace line (sim/trace.go), as read back. Pointer
// fields are the ones whose zero means something (replica 0, client 0).
type traceLine struct {
	AtNs        int64      `json:"at_ns"`
	Replica     *int       `json:"replica"`
	Kind        string     `json:"kind"`
	Status      string     `json:"status"`
	View        uint32     `json:"view"`
	LogView     uint32     `json:"log_view"`
	Op          uint64     `json:"op"`
	Commit      uint64     `json:"commit"`
	ID          string     `json:"identity"`
	Probe       string     `json:"probe"`
	ClientIndex *int       `json:"client_index"`
	Client      string     `json:"client"`
	Request     uint64     `json:"request"`
	Operation   string     `json:"operation"`
	Outcome     string     `json:"outcome"`
	Reason      string     `json:"reason"`
	Attempts    int        `json:"attempts"`
	Target      *int       `json:"target"`
	MidIO       bool       `json:"mid_io"`
	Ticks       int64      `json:"ticks"`
	Phase       string     `json:"phase"`
	Core        []int      `json:"core"`
	Mode        string     `json:"mode"`
	Symmetry    string     `json:"symmetry"`
	Cut         [][2]int32 `json:"cut"`
	Clogged     [][2]int32 `json:"clogged"`
	Cause       string     `json:"cause"`
	From        *int32     `json:"from"`
	To          *int32     `json:"to"`
	Command     string     `json:"command"`
	Fault       string     `json:"fault"`
	Count       uint64     `json:"count"`
	Group       uint64     `json:"group"`
}

// parseLine reads one trace line. replicas is the cluster's size: the
// network numbers clients after the replicas (sim/trace.go), and the words
// name them as the page does.
func parseLine(b []byte, replicas int) (Event, error) {
	var l traceLine
	if err := json.Unmarshal(b, &l); err != nil {
		return Event{}, err
	}
	if l.Kind == "" {
		return Event{}, fmt.Errorf("a line without a kind")
	}
	e := Event{AtNs: l.AtNs, Kind: l.Kind, Replica: -1, Client: -1, Group: l.Group, Status: l.Status,
		View: l.View, LogView: l.LogView, Op: l.Op, Commit: l.Commit, Request: l.Request,
		Operation: l.Operation, Outcome: l.Outcome, Count: l.Count}
	if l.Replica != nil {
		e.Replica = *l.Replica
	}
	if l.ClientIndex != nil {
		e.Client = *l.ClientIndex
	}
	e.Text = describe(&l, replicas)
	return e, nil
}

// describe is a line's words beyond what the Event's fields hold, for a
// tooltip: a probe's name, an outcome, a fault's count, a cut.
func describe(l *traceLine, replicas int) string {
	var w []string
	add := func(s string) { w = append(w, s) }
	if l.Probe != "" {
		add(l.Probe)
	}
	if l.Operation != "" {
		add(l.Operation)
	}
	if l.Outcome != "" {
		add(l.Outcome)
	}
	if l.Reason != "" {
		add("reason " + l.Reason)
	}
	if l.Attempts > 1 {
		add(strconv.Itoa(l.Attempts) + " attempts")
	}
	if l.Target != nil {
		add("resent to replica " + strconv.Itoa(*l.Target))
	}
	if l.MidIO {
		add("with I/O in flight")
	}
	if l.Ticks > 0 {
		add(strconv.FormatInt(l.Ticks, 10) + " ticks")
	}
	if l.Phase != "" {
		add(l.Phase + " phase, core " + ints(l.Core))
	}
	if l.Mode != "" {
		add(l.Mode + " " + l.Symmetry)
	}
	if len(l.Cut) > 0 {
		add("cut " + paths(l.Cut, replicas))
	}
	if len(l.Clogged) > 0 {
		add(strconv.Itoa(len(l.Clogged)) + " paths clogged")
	}
	if l.Cause != "" {
		add("cause " + l.Cause)
	}
	if l.From != nil && l.To != nil {
		add(node(*l.From, replicas) + " → " + node(*l.To, replicas))
	}
	if l.Command != "" {
		add(l.Command)
	}
	if l.Fault != "" {
		add(l.Fault)
	}
	if l.Count > 0 {
		add("×" + strconv.FormatUint(l.Count, 10))
	}
	if l.ID != "" {
		add(l.ID)
	}
	return strings.Join(w, ", ")
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// node names a network node: replicas first, then clients.
func node(n int32, replicas int) string {
	if int(n) < replicas {
		return "replica " + strconv.Itoa(int(n))
	}
	return "client " + strconv.Itoa(int(n)-replicas)
}

// paths names cut or clogged paths, replicas by number ("0→2").
func paths(ps [][2]int32, replicas int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		a, b := strconv.Itoa(int(p[0])), strconv.Itoa(int(p[1]))
		if int(p[0]) >= replicas {
			a = "c" + strconv.Itoa(int(p[0])-replicas)
		}
		if int(p[1]) >= replicas {
			b = "c" + strconv.Itoa(int(p[1])-replicas)
		}
		s[i] = a + "→" + b
	}
	return strings.Join(s, " ")
}

// Title is the event in a line of words: when, whose, what.
func (e *Event) Title(replicas int) string {
	var b strings.Builder
	b.WriteString(Seconds(e.AtNs))
	b.WriteString(" ")
	switch {
	case e.Replica >= 0:
		b.WriteString("replica " + strconv.Itoa(e.Replica) + " ")
	case e.Client >= 0:
		b.WriteString("client " + strconv.Itoa(e.Client) + " ")
	}
	b.WriteString(e.Kind)
	if e.Group != 0 {
		b.WriteString(" group " + strconv.FormatUint(e.Group, 10))
	}
	if e.Status != "" {
		b.WriteString(" " + e.Status)
	}
	if e.View != 0 || e.Kind == "status" {
		b.WriteString(" view " + strconv.FormatUint(uint64(e.View), 10))
	}
	if e.LogView != 0 || e.Kind == "status" {
		b.WriteString(" log_view " + strconv.FormatUint(uint64(e.LogView), 10))
	}
	if e.Op != 0 || e.Kind == "status" {
		b.WriteString(" op " + strconv.FormatUint(e.Op, 10))
	}
	if e.Commit != 0 || e.Kind == "status" {
		b.WriteString(" commit " + strconv.FormatUint(e.Commit, 10))
	}
	if e.Request != 0 || strings.HasPrefix(e.Kind, "client_") {
		b.WriteString(" request " + strconv.FormatUint(e.Request, 10))
	}
	if e.Text != "" {
		b.WriteString(": " + e.Text)
	}
	return b.String()
}

// Seconds is virtual time as the evidence prints it: seconds with six
// decimals.
func Seconds(ns int64) string {
	return strconv.FormatFloat(float64(ns)/1e9, 'f', 6, 64) + "s"
}
