package timeline

// Span is the least, the greatest and the last value of a number over a
// bucket.
type Span struct {
	Min, Max, Last uint64
}

func point(v uint64) Span { return Span{v, v, v} }

func (s *Span) observe(v uint64) {
	s.Min, s.Max, s.Last = min(s.Min, v), max(s.Max, v), v
}

// merged is a followed by b.
func (a Span) merged(b Span) Span { return Span{min(a.Min, b.Min), max(a.Max, b.Max), b.Last} }

// ReplicaBucket is one replica over one bucket of time. A bucket no
// event touched carries the state of the one before (Seen false: nothing
// happened in it; Timeline.fill writes the carried state in).
type ReplicaBucket struct {
	Seen bool
	// Statuses: a bit per status seen (1<<StatusNormal, ...); Worst the
	// most severe of them, Last the one it ended in.
	Statuses    uint16
	Worst, Last uint8
	// Time is the virtual ns spent in each status within the bucket, so
	// that a bucket of a long run is drawn in the status that held it most
	// (Dominant), the worst one beside it.
	Time        [statusCount]int64
	Paused      bool // paused at some moment of the bucket
	PausedLast  bool // and at its end
	View        Span
	LogView     Span
	Op          Span
	Commit      Span
	GroupsAway  Span // partition groups not normal
	Events      int  // the replica's trace lines
	PartitionEv int  // of them, the partition planes'
	Crashes     int
	Restarts    int
	Freezes     int
	Pauses      int
	DiskFaults  uint64 // sectors: what storage_fault lines count
	Evidence    bool   // an evidence line names the replica in it (Finish)
}

// start opens the bucket with the state carried into it (and the time
// already accrued in it).
func (b *ReplicaBucket) start(s *ReplicaState) {
	*b = ReplicaBucket{Time: b.Time, Seen: true, Statuses: 1 << s.Status, Worst: s.Status, Last: s.Status, Paused: s.Paused, PausedLast: s.Paused,
		View: point(uint64(s.View)), LogView: point(uint64(s.LogView)), Op: point(s.Op), Commit: point(s.Commit),
		GroupsAway: point(uint64(s.GroupsAway))}
}

// observe takes the state after one of the bucket's events.
func (b *ReplicaBucket) observe(s *ReplicaState) {
	b.Statuses |= 1 << s.Status
	b.Worst, b.Last = max(b.Worst, s.Status), s.Status
	b.Paused, b.PausedLast = b.Paused || s.Paused, s.Paused
	b.View.observe(uint64(s.View))
	b.LogView.observe(uint64(s.LogView))
	b.Op.observe(s.Op)
	b.Commit.observe(s.Commit)
	b.GroupsAway.observe(uint64(s.GroupsAway))
}

// count adds what the event was to the bucket's tallies.
func (b *ReplicaBucket) count(e *Event) {
	b.Events++
	if e.Group != 0 {
		b.PartitionEv++
	}
	switch e.Kind {
	case "crash":
		b.Crashes++
	case "restart":
		b.Restarts++
	case "freeze":
		b.Freezes++
	case "pause":
		b.Pauses++
	case "storage_fault":
		b.DiskFaults += countOf(e)
	}
}

// merged is a followed by b, for the doubling of the bucket width. An
// unseen bucket carries the state of the one before it, so a seen
// neighbour after it (which began from that state) covers it.
func (a ReplicaBucket) merged(b ReplicaBucket) ReplicaBucket {
	var time [statusCount]int64
	for i := range time {
		time[i] = a.Time[i] + b.Time[i]
	}
	switch {
	case !b.Seen:
		a.Time = time
		return a
	case !a.Seen:
		b.Time = time
		return b
	}
	return ReplicaBucket{Seen: true, Time: time, Statuses: a.Statuses | b.Statuses, Worst: max(a.Worst, b.Worst), Last: b.Last,
		Paused: a.Paused || b.Paused, PausedLast: b.PausedLast, View: a.View.merged(b.View), LogView: a.LogView.merged(b.LogView),
		Op: a.Op.merged(b.Op), Commit: a.Commit.merged(b.Commit), GroupsAway: a.GroupsAway.merged(b.GroupsAway),
		Events: a.Events + b.Events, PartitionEv: a.PartitionEv + b.PartitionEv, Crashes: a.Crashes + b.Crashes,
		Restarts: a.Restarts + b.Restarts, Freezes: a.Freezes + b.Freezes, Pauses: a.Pauses + b.Pauses,
		DiskFaults: a.DiskFaults + b.DiskFaults, Evidence: a.Evidence || b.Evidence}
}

// carried is the bucket after b when nothing happens in it; its accrued
// time is its own (held).
func (b *ReplicaBucket) carried(held [statusCount]int64) ReplicaBucket {
	return ReplicaBucket{Time: held, Statuses: 1 << b.Last, Worst: b.Last, Last: b.Last, Paused: b.PausedLast, PausedLast: b.PausedLast,
		View: point(b.View.Last), LogView: point(b.LogView.Last), Op: point(b.Op.Last), Commit: point(b.Commit.Last),
		GroupsAway: point(b.GroupsAway.Last)}
}

// Dominant is the status the replica spent the most of the bucket in
// (the more severe of two that tie).
func (b *ReplicaBucket) Dominant() uint8 {
	best, most := b.Last, int64(0)
	for s := range statusCount {
		if b.Time[s] > 0 && b.Time[s] >= most {
			best, most = s, b.Time[s]
		}
	}
	return best
}

// accrue adds the time from fromNs to toNs (toNs's bucket already made)
// to the buckets it overlaps, in status st.
func (g *grid) accrue(bs []ReplicaBucket, st uint8, fromNs, toNs int64) {
	for i := int(fromNs / g.widthNs); i < g.max && int64(i)*g.widthNs < toNs; i++ {
		lo, hi := max(fromNs, int64(i)*g.widthNs), min(toNs, int64(i+1)*g.widthNs)
		if hi > lo {
			bs[i].Time[st] += hi - lo
		}
	}
}

// ClientBucket is one client over one bucket.
type ClientBucket struct {
	Seen       bool
	InFlight   bool // a request was open at some moment of the bucket
	OpenLast   bool // and at its end
	Invokes    int
	Replied    int
	Denied     int
	Indefinite int
	Timeouts   int
	Evidence   bool
}

func (b *ClientBucket) start(s *ClientState) {
	*b = ClientBucket{Seen: true, InFlight: s.Open, OpenLast: s.Open}
}

func (b *ClientBucket) observe(s *ClientState) {
	b.InFlight, b.OpenLast = b.InFlight || s.Open, s.Open
}

func (b *ClientBucket) count(e *Event) {
	switch e.Kind {
	case "client_invoke":
		b.Invokes++
	case "client_timeout":
		b.Timeouts++
	case "client_complete":
		switch e.Outcome {
		case "replied":
			b.Replied++
		case "denied":
			b.Denied++
		default: // indefinite, with its reason
			b.Indefinite++
		}
	}
}

// merged is a followed by b.
func (a ClientBucket) merged(b ClientBucket) ClientBucket {
	switch {
	case !b.Seen:
		return a
	case !a.Seen:
		return b
	}
	return ClientBucket{Seen: true, InFlight: a.InFlight || b.InFlight, OpenLast: b.OpenLast, Invokes: a.Invokes + b.Invokes,
		Replied: a.Replied + b.Replied, Denied: a.Denied + b.Denied, Indefinite: a.Indefinite + b.Indefinite,
		Timeouts: a.Timeouts + b.Timeouts, Evidence: a.Evidence || b.Evidence}
}

func (b *ClientBucket) carried() ClientBucket {
	return ClientBucket{InFlight: b.OpenLast, OpenLast: b.OpenLast}
}

// NetworkBucket is the network over one bucket: partitions, clogs,
// resets, corrupted frames, the rollback nemesis's moves, and the start of
// the liveness phase.
type NetworkBucket struct {
	Seen            bool
	Partitioned     bool // a partition held at some moment of the bucket
	PartitionedLast bool // and at its end
	Partitions      int
	Heals           int
	Clogs           uint64
	Resets          uint64
	Corrupted       uint64
	Nemesis         int
	Liveness        bool // the liveness phase began in it
}

func (b *NetworkBucket) start(s *NetworkState) {
	*b = NetworkBucket{Seen: true, Partitioned: s.Partitioned, PartitionedLast: s.Partitioned}
}

func (b *NetworkBucket) observe(s *NetworkState) {
	b.Partitioned, b.PartitionedLast = b.Partitioned || s.Partitioned, s.Partitioned
}

func (b *NetworkBucket) count(e *Event) {
	switch e.Kind {
	case "partition":
		b.Partitions++
	case "partition_heal":
		b.Heals++
	case "clog":
		b.Clogs += countOf(e)
	case "connection_reset":
		b.Resets += countOf(e)
	case "frame_corrupted":
		b.Corrupted += countOf(e)
	case "nemesis":
		b.Nemesis++
	case "phase":
		b.Liveness = true
	}
}

func (a NetworkBucket) merged(b NetworkBucket) NetworkBucket {
	switch {
	case !b.Seen:
		return a
	case !a.Seen:
		return b
	}
	return NetworkBucket{Seen: true, Partitioned: a.Partitioned || b.Partitioned, PartitionedLast: b.PartitionedLast,
		Partitions: a.Partitions + b.Partitions, Heals: a.Heals + b.Heals, Clogs: a.Clogs + b.Clogs,
		Resets: a.Resets + b.Resets, Corrupted: a.Corrupted + b.Corrupted, Nemesis: a.Nemesis + b.Nemesis,
		Liveness: a.Liveness || b.Liveness}
}

func (b *NetworkBucket) carried() NetworkBucket {
	return NetworkBucket{Partitioned: b.PartitionedLast, PartitionedLast: b.PartitionedLast}
}

// grid is the overview: every lane's buckets, all of one width. It starts
// at a tick per bucket and doubles the width, merging neighbours, whenever
// an event falls past the last bucket, so that a run of any length fits
// in max buckets (a 10 M-tick run: 8,192 ticks, 82 s, each of 2,048).
type grid struct {
	widthNs  int64
	max      int
	used     int // buckets up to the last event's
	replicas [][]ReplicaBucket
	clients  [][]ClientBucket
	network  []NetworkBucket
}

func newGrid(widthNs int64, buckets, replicas, clients int) *grid {
	g := &grid{widthNs: widthNs, max: buckets, replicas: make([][]ReplicaBucket, replicas),
		clients: make([][]ClientBucket, clients), network: make([]NetworkBucket, buckets)}
	for i := range g.replicas {
		g.replicas[i] = make([]ReplicaBucket, buckets)
	}
	for i := range g.clients {
		g.clients[i] = make([]ClientBucket, buckets)
	}
	return g
}

// index is the bucket of time t (ns), widening the buckets until it fits.
func (g *grid) index(t int64) int {
	t = max(t, 0)
	for t/g.widthNs >= int64(g.max) {
		g.double()
	}
	i := int(t / g.widthNs)
	g.used = max(g.used, i+1)
	return i
}

// double doubles the bucket width: bucket i becomes buckets 2i and 2i+1
// merged.
func (g *grid) double() {
	g.widthNs *= 2
	g.used = (g.used + 1) / 2
	half := g.max / 2
	for _, bs := range g.replicas {
		for i := range half {
			bs[i] = bs[2*i].merged(bs[2*i+1])
		}
		clear(bs[half:])
	}
	for _, bs := range g.clients {
		for i := range half {
			bs[i] = bs[2*i].merged(bs[2*i+1])
		}
		clear(bs[half:])
	}
	bs := g.network
	for i := range half {
		bs[i] = bs[2*i].merged(bs[2*i+1])
	}
	clear(bs[half:])
}

// fill writes the carried state into every bucket up to n that no event
// touched, so that each bucket says what its lane was then.
func (g *grid) fill(n int) {
	for _, bs := range g.replicas {
		for i := 1; i < n; i++ {
			if !bs[i].Seen {
				bs[i] = bs[i-1].carried(bs[i].Time)
			}
		}
	}
	for _, bs := range g.clients {
		for i := 1; i < n; i++ {
			if !bs[i].Seen {
				bs[i] = bs[i-1].carried()
			}
		}
	}
	for i := 1; i < n; i++ {
		if !g.network[i].Seen {
			g.network[i] = g.network[i-1].carried()
		}
	}
}

// countOf is what a fault line counts (sectors, frames, resets), 1 when it
// says nothing.
func countOf(e *Event) uint64 {
	if e.Count > 0 {
		return e.Count
	}
	return 1
}
