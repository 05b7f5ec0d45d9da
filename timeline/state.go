package timeline

// The statuses a replica lane shows. The metadata plane's three (vsr), and
// what the process faults make of a replica: down after a crash, booting
// from a restart until the replica reports its first status, frozen when
// the liveness phase left it out of the core. Their order is severity: a
// bucket of the overview is drawn in the worst status seen in it, so that
// a view change of a few milliseconds still shows in a bucket of seconds.
const (
	StatusUnknown uint8 = iota // nothing reported yet
	StatusNormal
	StatusViewChange
	StatusBooting
	StatusRecovering
	StatusFrozen
	StatusDown
	statusCount
)

// StatusName spells a status as the page and the trace do.
func StatusName(s uint8) string {
	switch s {
	case StatusNormal:
		return "normal"
	case StatusViewChange:
		return "view_change"
	case StatusBooting:
		return "booting"
	case StatusRecovering:
		return "recovering"
	case StatusFrozen:
		return "frozen"
	case StatusDown:
		return "down"
	}
	return "unknown"
}

// statusOf reads a status the trace spells (the metadata plane's three).
func statusOf(name string) uint8 {
	for s := range statusCount {
		if StatusName(s) == name {
			return s
		}
	}
	return StatusUnknown
}

// ReplicaState is what a replica's lane shows at one moment: its status on
// the metadata plane (or down, booting, frozen), whether it is paused, its
// view, log_view, op and commit there, and how many of its partition
// groups are not normal. Commit is the replica's commit number as VSR
// states it (commit_max: the highest op it knows committed), not the ops
// it has applied, which lag behind on a backup.
//
// Where they come from (the trace has no line per op a backup takes in):
// status lines carry all four numbers (commit as commit_max); start_view
// sets the view and op of the primary that sent it; prepared and
// reconciled set op (a new prepare, a truncated log); committed (an op
// applied), a restored checkpoint and an installed state raise commit and
// op to that op; a prepare_ok the replica sent (Recorder.Frame) raises op
// to the op it acknowledges. A restart's first status line sets them
// again, to what the replica recovered.
type ReplicaState struct {
	Status     uint8
	Paused     bool
	View       uint32
	LogView    uint32
	Op         uint64
	Commit     uint64
	GroupsAway int             // partition groups not normal
	away       map[uint64]bool // the groups counted in GroupsAway; looked up only
}

// clone copies s, its map too.
func (s *ReplicaState) clone() ReplicaState {
	c := *s
	c.away = make(map[uint64]bool, len(s.away))
	for g, v := range s.away { // a copy: the order does not matter
		c.away[g] = v
	}
	return c
}

// apply moves the state by one of the replica's events.
func (s *ReplicaState) apply(e *Event) {
	if e.Group != 0 {
		if e.Kind == "status" {
			away := e.Status != "normal"
			if s.away == nil {
				s.away = map[uint64]bool{}
			}
			if away != s.away[e.Group] {
				if away {
					s.GroupsAway++
				} else {
					s.GroupsAway--
				}
			}
			s.away[e.Group] = away
		}
		return
	}
	switch e.Kind {
	case "status":
		s.Status = statusOf(e.Status)
		s.View, s.LogView, s.Op, s.Commit = e.View, e.LogView, e.Op, e.Commit
	case "start_view":
		s.View, s.LogView, s.Op = e.View, e.View, e.Op
		s.Commit = max(s.Commit, e.Commit)
	case "prepared", "reconciled":
		s.Op = e.Op
	case "committed", "checkpoint_restored", "state_installed":
		s.Commit = max(s.Commit, e.Op)
		s.Op = max(s.Op, e.Op)
	case "prepare_ok":
		s.Op = max(s.Op, e.Op)
	case "crash":
		s.Status, s.Paused = StatusDown, false
		s.GroupsAway, s.away = 0, nil // its groups are gone with the process
	case "restart":
		s.Status, s.Paused = StatusBooting, false
	case "freeze":
		s.Status, s.Paused = StatusFrozen, false
	case "pause":
		s.Paused = true
	case "resume":
		s.Paused = false
	}
}

// ClientState is what a client's lane shows: the request it waits for, if
// any, since when.
type ClientState struct {
	Open      bool
	Request   uint64
	InvokedNs int64
	Operation string
	Timeouts  int // of the open request
}

func (s *ClientState) apply(e *Event) {
	switch e.Kind {
	case "client_invoke":
		*s = ClientState{Open: true, Request: e.Request, InvokedNs: e.AtNs, Operation: e.Operation}
	case "client_timeout":
		s.Timeouts++
	case "client_complete":
		s.Open = false
	}
}

// NetworkState is what the network lane shows: whether a partition cuts
// any path between replicas.
type NetworkState struct {
	Partitioned bool
}

func (s *NetworkState) apply(e *Event) {
	switch e.Kind {
	case "partition":
		s.Partitioned = true
	case "partition_heal":
		s.Partitioned = false
	}
}

// States is every lane's state at one moment.
type States struct {
	Replicas []ReplicaState
	Clients  []ClientState
	Network  NetworkState
}

func newStates(replicas, clients int) States {
	return States{Replicas: make([]ReplicaState, replicas), Clients: make([]ClientState, clients)}
}

// apply moves the lane the event belongs to.
func (ls *States) apply(e *Event) {
	switch {
	case e.Replica >= 0 && e.Replica < len(ls.Replicas):
		ls.Replicas[e.Replica].apply(e)
	case e.Client >= 0 && e.Client < len(ls.Clients):
		ls.Clients[e.Client].apply(e)
	case e.Replica < 0 && e.Client < 0:
		ls.Network.apply(e)
	}
}

// snapshot copies the states.
func (ls *States) snapshot() States {
	c := States{Replicas: make([]ReplicaState, len(ls.Replicas)), Clients: append([]ClientState(nil), ls.Clients...), Network: ls.Network}
	for i := range ls.Replicas {
		c.Replicas[i] = ls.Replicas[i].clone()
	}
	return c
}
