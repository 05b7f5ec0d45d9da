package timeline

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Cite is what one evidence line names, read from its words (the
// checker's notes, checker.go): its time (the evidence prints microseconds),
// the replica or client it is about, and the op, group and request it
// speaks of. The lines read:
//
//	1.212719s replica 0 prepared op 14 in view 0 0x...
//	1.224581s replica 0 committed op 5 of group 3 0x...
//	1.283265s client 0 (0x...) request 8 denied
//	5.190000s replica 2 is view_change in view 1 (log_view 0, op 0, commit 0)
//
// A line about neither a replica nor a client (the memory-loss bound, a
// group's offsets) is listed but highlights no lane.
type Cite struct {
	Line       string
	AtNs       int64
	Replica    int    // -1: none
	Client     int    // -1: none
	Op         uint64 // 0: none (ops count from 1)
	Group      uint64 // 0: the metadata plane
	Request    uint64
	HasRequest bool
}

var (
	citeTime    = regexp.MustCompile(`^(\d+)\.(\d{6})s (.*)$`)
	citeReplica = regexp.MustCompile(`^replica (\d+) `)
	citeClient  = regexp.MustCompile(`^client (\d+) `)
	citeOp      = regexp.MustCompile(`\bop (\d+)`)
	citeGroup   = regexp.MustCompile(`\bgroup (\d+)`)
	citeRequest = regexp.MustCompile(`\brequest (\d+)`)
	namedList   = regexp.MustCompile(`\b(replicas|ops) \[([0-9 ]*)\]`)
)

// parseCite reads one evidence line; false when it does not start with a
// time.
func parseCite(line string) (Cite, bool) {
	m := citeTime.FindStringSubmatch(line)
	if m == nil {
		return Cite{}, false
	}
	sec, err1 := strconv.ParseInt(m[1], 10, 64)
	us, err2 := strconv.ParseInt(m[2], 10, 64)
	if err1 != nil || err2 != nil {
		return Cite{}, false
	}
	c := Cite{Line: line, AtNs: sec*1e9 + us*1e3, Replica: -1, Client: -1}
	rest := m[3]
	if m := citeReplica.FindStringSubmatch(rest); m != nil {
		c.Replica, _ = strconv.Atoi(m[1])
	} else if m := citeClient.FindStringSubmatch(rest); m != nil {
		c.Client, _ = strconv.Atoi(m[1])
	}
	if m := citeOp.FindStringSubmatch(rest); m != nil {
		c.Op, _ = strconv.ParseUint(m[1], 10, 64)
	}
	if m := citeGroup.FindStringSubmatch(rest); m != nil {
		c.Group, _ = strconv.ParseUint(m[1], 10, 64)
	}
	if m := citeRequest.FindStringSubmatch(rest); m != nil {
		c.Request, _ = strconv.ParseUint(m[1], 10, 64)
		c.HasRequest = true
	}
	return c, true
}

// names reports whether the evidence line speaks of event e: the same
// lane, the same microsecond (the evidence rounds to one), the same plane
// (group), and the same op and request where both name one.
func (c *Cite) names(e *Event) bool {
	if d := e.AtNs - c.AtNs; d < -501 || d > 501 {
		return false
	}
	switch {
	case c.Replica >= 0:
		if e.Replica != c.Replica || e.Group != c.Group {
			return false
		}
	case c.Client >= 0:
		if e.Client != c.Client {
			return false
		}
	default:
		return false
	}
	if c.Op != 0 && e.Op != 0 && c.Op != e.Op {
		return false
	}
	if c.HasRequest && e.Client >= 0 && c.Request != e.Request {
		return false
	}
	return !e.Derived
}

// Named is what the violation's text names: the replicas and ops the
// checker lists ("(at 1.250 s, replicas [1 2], ops [14])"), and a group
// ("group 5") when it speaks of a partition plane.
type Named struct {
	Replicas []int
	Ops      []uint64
	Group    uint64
}

func parseNamed(violation string) Named {
	var n Named
	for _, m := range namedList.FindAllStringSubmatch(violation, -1) {
		for _, f := range strings.Fields(m[2]) {
			v, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				continue
			}
			if m[1] == "replicas" {
				n.Replicas = append(n.Replicas, int(v))
			} else {
				n.Ops = append(n.Ops, v)
			}
		}
	}
	if m := citeGroup.FindStringSubmatch(violation); m != nil {
		n.Group, _ = strconv.ParseUint(m[1], 10, 64)
	}
	return n
}

// names reports whether the violation names event e: one of its ops on
// one of its replicas (any replica when it names none), on its plane.
func (n *Named) names(e *Event) bool {
	if len(n.Ops) == 0 || e.Op == 0 || e.Replica < 0 || e.Group != n.Group || e.Derived {
		return false
	}
	if len(n.Replicas) > 0 && !slices.Contains(n.Replicas, e.Replica) {
		return false
	}
	return slices.Contains(n.Ops, e.Op)
}

// namesFrame reports whether the violation names a frame: a prepare,
// repair or prepare_ok of one of its ops on its plane, from or to one of
// its replicas (any when it names none).
func (n *Named) namesFrame(f *Frame) bool {
	if len(n.Ops) == 0 || f.Group != n.Group || !slices.Contains(n.Ops, f.Op) {
		return false
	}
	switch f.Command {
	case "prepare", "repair_prepare", "prepare_ok":
	default:
		return false
	}
	return len(n.Replicas) == 0 || slices.Contains(n.Replicas, f.From) || slices.Contains(n.Replicas, f.To)
}

// cutViolation splits a violation into its name and the rest.
func cutViolation(v string) (name, rest string, found bool) {
	return strings.Cut(v, ": ")
}

// cite reads the evidence and the violation, and marks the overview
// buckets of the lanes the evidence names.
func (t *Timeline) cite() {
	t.Cites = nil
	for _, l := range t.Evidence {
		c, ok := parseCite(l)
		if !ok {
			continue
		}
		t.Cites = append(t.Cites, c)
		i := t.BucketOf(c.AtNs)
		switch {
		case c.Replica >= 0 && c.Replica < t.Replicas:
			t.ReplicaLanes[c.Replica][i].Evidence = true
		case c.Client >= 0 && c.Client < t.Clients:
			t.ClientLanes[c.Client][i].Evidence = true
		}
	}
	t.Named = parseNamed(t.Violation)
}

// cited reports whether an evidence line names e.
func (t *Timeline) cited(e *Event) bool {
	for i := range t.Cites {
		if t.Cites[i].names(e) {
			return true
		}
	}
	return false
}
