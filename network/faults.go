package network

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/plan"
)

// ticker is the network's periodic event: every TickNs, on the tick grid, it
// draws partitions and clogs. It runs only while faults are on and some
// per-tick fault is enabled, so a fault-free network leaves the loop idle
// once its frames are delivered.
type ticker struct {
	n   *Network
	arg uint64
}

func (t *ticker) arm() {
	now := t.n.sched.Now()
	t.arg = t.n.nextArg()
	t.n.sched.At((now/TickNs+1)*TickNs, t, t.arg)
}

// Fire runs one network tick. It reports "network.tick" when a partition
// started or healed or a path clogged, hashing what changed.
func (t *ticker) Fire(nowNs int64, arg uint64) (string, int32, uint64) {
	if arg != t.arg {
		return "", -1, 0
	}
	t.arg = 0
	n := t.n
	if !n.tickNeeded() {
		return "", -1, 0 // faults went off: the ticker stops for good
	}
	changed, hash := n.tickFaults(nowNs)
	t.arm()
	if !changed {
		return "", -1, 0
	}
	return "network.tick", -1, hash
}

func (n *Network) tickNeeded() bool {
	o := &n.opts
	partitions := o.PartitionMode != PartitionNone && (o.PartitionProbability > 0 || o.UnpartitionProbability > 0)
	return n.faultsOn && (partitions || o.ClogProbability > 0)
}

// mix folds v into a running hash of what a tick changed.
func mix(h, v uint64) uint64 {
	h = (h ^ v) * 0x9e3779b97f4a7c15
	return h ^ h>>29
}

// tickFaults draws this tick's partition change and clogs.
func (n *Network) tickFaults(nowNs int64) (changed bool, hash uint64) {
	o := &n.opts
	if o.PartitionMode != PartitionNone && len(n.replicas) >= 2 {
		changed, hash = n.tickPartition(nowNs) // first: the hash starts here
	}
	if o.ClogProbability == 0 {
		return changed, hash
	}
	var due []plan.Firing
	if o.Plan.Replaying() {
		due = o.Plan.Due(nowNs, plan.Clog)
	}
	if nowNs >= n.clogScanNs || len(due) > 0 {
		// Replaying, the scan still draws but clogs nothing, and the plan's
		// clogs go on hashing where it left off, in its order (the scan's):
		// a whole plan hashes each tick as its recording did.
		var c bool
		var h uint64
		if nowNs >= n.clogScanNs {
			c, h = n.tickClogs(nowNs)
		}
		for _, f := range due {
			if n.replayClog(nowNs, f, &h) {
				c = true
			}
		}
		changed, hash = changed || c, mix(hash, h)
	}
	return changed, hash
}

// tickPartition draws this tick's partition change: a heal or a new
// partition while partitioned, a partition while not. Replaying a fault
// plan, the draws happen as they would, but the plan says what changes,
// with the partition's shape.
func (n *Network) tickPartition(nowNs int64) (changed bool, hash uint64) {
	o := &n.opts
	sinceNs := nowNs - n.partitionChangedNs
	drawnPartition, drawnHeal := false, false
	var side []uint8
	if n.partitioned {
		if sinceNs >= o.PartitionStabilityMinTicks*TickNs && n.rngPartition.Float64() < o.UnpartitionProbability {
			if o.RepartitionProbability > 0 && n.rngPartition.Float64() < o.RepartitionProbability {
				drawnPartition, side = true, n.drawSide()
			} else {
				drawnHeal = true
			}
		}
	} else if sinceNs >= o.UnpartitionStabilityMinTicks*TickNs && n.rngPartition.Float64() < o.PartitionProbability {
		drawnPartition, side = true, n.drawSide()
	}
	all := plan.Site{Kind: plan.Partition, A: -1, B: -1}
	// A knob off fires none of the plan's partitions either (a heal still
	// lifts one).
	if args, fire := o.Plan.Fire(nowNs, all, drawnPartition); fire && (o.PartitionProbability > 0 || o.RepartitionProbability > 0) {
		if o.Plan.Replaying() {
			if side = n.parseSide(args); side == nil {
				return false, 0 // a shape for another cluster: nothing cut
			}
		}
		o.Plan.Fired(nowNs, all, sideArgs(side))
		if n.partitioned {
			n.stats.Repartitions++
		}
		n.setCuts(side, o.PartitionSymmetry == PartitionOneWay)
		return true, mix(0, n.cutHash())
	}
	heal := plan.Site{Kind: plan.Heal, A: -1, B: -1}
	if _, fire := o.Plan.Fire(nowNs, heal, drawnHeal); fire && n.partitioned {
		o.Plan.Fired(nowNs, heal, "")
		n.setCuts(nil, false)
		return true, mix(0, 1)
	}
	return false, 0
}

// sideArgs is a partition's shape in a fault plan: one digit a replica, by
// position (sideRest, sideCut, sideBridge).
func sideArgs(side []uint8) string {
	b := make([]byte, len(side))
	for i, s := range side {
		b[i] = '0' + s
	}
	return string(b)
}

// parseSide reads sideArgs; nil if args is not a shape of this cluster.
func (n *Network) parseSide(args string) []uint8 {
	if len(args) != len(n.replicas) {
		return nil
	}
	side := make([]uint8, len(args))
	for i := range args {
		if args[i] < '0' || args[i] > '0'+sideBridge {
			return nil
		}
		side[i] = args[i] - '0'
	}
	return side
}

// replayClog clogs the path of a replayed fault plan's clog f now, for
// the time the plan gives, folding it into hash as tickClogs does; false
// if f names no path of this cluster.
func (n *Network) replayClog(nowNs int64, f plan.Firing, hash *uint64) bool {
	from, okFrom := n.index[NodeID(f.Site.A)]
	to, okTo := n.index[NodeID(f.Site.B)]
	durationNs, err := strconv.ParseInt(f.Args, 10, 64)
	if !okFrom || !okTo || from == to || err != nil || durationNs < 0 {
		return false
	}
	p := &n.paths[from][to]
	p.clogAtNs = 0
	p.clogUntilNs = nowNs + durationNs
	n.opts.Plan.Fired(nowNs, f.Site, f.Args)
	n.stats.Clogs++
	*hash = mix(mix(mix(*hash, uint64(n.nodes[from].id)), uint64(n.nodes[to].id)), uint64(p.clogUntilNs))
	n.clogScanNs = min(n.clogScanNs, p.clogUntilNs)
	return true
}

// tickClogs clogs the paths due to clog now. Each path clogs with
// ClogProbability at every tick it is not clogged; rather than a draw per
// path per tick (hundreds a tick with a dozen clients), a path that becomes
// eligible draws how many ticks pass until its next clog (the geometric
// distribution of the same Bernoulli process), and the network scans its
// paths only at the earliest tick one of them is due or unclogs.
func (n *Network) tickClogs(nowNs int64) (changed bool, hash uint64) {
	o := &n.opts
	next := int64(math.MaxInt64)
	for _, from := range n.byID {
		for _, to := range n.byID {
			if from == to {
				continue
			}
			p := &n.paths[from][to]
			if nowNs < p.clogUntilNs {
				p.clogAtNs = 0 // eligible again once unclogged: draw then
				next = min(next, p.clogUntilNs)
				continue
			}
			if p.clogAtNs == 0 {
				p.clogAtNs = nowNs + (geometricTicks(n.rngClog, o.ClogProbability)-1)*TickNs
			}
			if p.clogAtNs > nowNs {
				next = min(next, p.clogAtNs)
				continue
			}
			p.clogAtNs = 0
			durationNs := draw(n.rngClog, 0, o.ClogDurationMeanNs)
			if o.Plan.Replaying() {
				continue // the plan clogs (replayClogs)
			}
			p.clogUntilNs = nowNs + durationNs
			o.Plan.Fired(nowNs, plan.Site{Kind: plan.Clog, A: int32(n.nodes[from].id), B: int32(n.nodes[to].id)},
				strconv.FormatInt(durationNs, 10))
			n.stats.Clogs++
			changed = true
			hash = mix(mix(mix(hash, uint64(n.nodes[from].id)), uint64(n.nodes[to].id)), uint64(p.clogUntilNs))
			next = min(next, p.clogUntilNs)
		}
	}
	n.clogScanNs = next
	return changed, hash
}

// geometricTicks draws the tick, counting from 1, of the first success of
// a Bernoulli process with probability p per tick.
func geometricTicks(r *rand.Rand, p float64) int64 {
	if p >= 1 {
		return 1
	}
	u := 1 - r.Float64() // in (0, 1]
	k := math.Floor(math.Log(u)/math.Log1p(-p)) + 1
	if k > geometricTicksMax {
		return geometricTicksMax
	}
	return int64(k)
}

// geometricTicksMax caps a geometric draw: about 35 years of ticks, far
// past any run, and no overflow in nanoseconds.
const geometricTicksMax = 1 << 37

// startRandomPartition replaces the cuts with a newly drawn partition and
// folds it into hash.
func (n *Network) startRandomPartition(hash uint64) uint64 {
	n.setCuts(n.drawSide(), n.opts.PartitionSymmetry == PartitionOneWay)
	return mix(hash, n.cutHash())
}

// Labels of replicas in a partition (drawSide, setCuts).
const (
	sideRest   uint8 = iota // the other side
	sideCut                 // this side: cut from the rest
	sideBridge              // connected to both sides (PartitionBridge)
)

// drawSide draws a random partition, one label per replica by position in
// n.replicas: sideCut on one side, sideRest on the other, sideBridge for a
// bridge replica that both sides still reach. For a one-way partition, the
// sideCut side can send but not receive.
func (n *Network) drawSide() []uint8 {
	r := len(n.replicas)
	side := make([]uint8, r)
	rng := n.rngPartition
	switch n.opts.PartitionMode {
	case PartitionIsolateSingle:
		side[rng.IntN(r)] = sideCut
	case PartitionUniformSize:
		size := 1 + rng.IntN(r-1)
		for _, i := range rng.Perm(r)[:size] {
			side[i] = sideCut
		}
	case PartitionUniformPartition:
		k := 0
		for i := range side {
			if rng.IntN(2) == 0 {
				side[i] = sideCut
				k++
			}
		}
		if k == 0 || k == r {
			// Never an empty side: move one replica across.
			i := rng.IntN(r)
			side[i] ^= sideCut
		}
	case PartitionBridge:
		if r < 3 {
			// No bridge without two others to join: isolate one.
			side[rng.IntN(r)] = sideCut
			break
		}
		perm := rng.Perm(r)
		side[perm[0]] = sideBridge
		size := 1 + rng.IntN(r-2)
		for _, i := range perm[1 : 1+size] {
			side[i] = sideCut
		}
	case PartitionPrimary:
		size := 1 + rng.IntN(max(1, (r-1)/2))
		perm := rng.Perm(r)
		if n.primaryHint != nil {
			if id, ok := n.primaryHint(); ok {
				// The primary's position in n.replicas goes first.
				k := slices.Index(perm, slices.Index(n.replicas, n.lookup(id)))
				perm[0], perm[k] = perm[k], perm[0]
			}
		}
		for _, i := range perm[:size] {
			side[i] = sideCut
		}
	default:
		panic("network: drawSide without a partition mode")
	}
	if n.opts.PartitionSymmetry == PartitionOneWay && rng.IntN(2) == 0 {
		// Either side may be the one that can only send.
		for i := range side {
			if side[i] != sideBridge {
				side[i] ^= sideCut
			}
		}
	}
	return side
}

// setCuts replaces the partition: with side nil, none; otherwise replicas
// labelled sideCut are split from those labelled sideRest (a sideBridge
// replica keeps every path), and paths into the sideCut side are cut, and
// paths out of it too unless oneWay. Directions stalled on paths no longer
// cut resume.
func (n *Network) setCuts(side []uint8, oneWay bool) {
	n.replaceCuts(side != nil, func(from, to int) bool {
		into := side[to] == sideCut && side[from] == sideRest
		out := side[from] == sideCut && side[to] == sideRest
		return into || (out && !oneWay)
	})
}

// replaceCuts replaces every cut between replicas: none unless
// partitioned, else the path from n.replicas[from] to n.replicas[to] is cut
// when cut(from, to) says so. A partition is counted, and directions
// stalled on paths no longer cut resume.
func (n *Network) replaceCuts(partitioned bool, cut func(from, to int) bool) {
	for i, a := range n.replicas {
		for j, b := range n.replicas {
			n.paths[a][b].cut = partitioned && cut(i, j)
		}
	}
	n.partitioned = partitioned
	n.partitionChangedNs = n.sched.Now()
	if partitioned {
		n.stats.Partitions++
	}
	n.resume()
}

// cutHash hashes the cut paths, in id order.
func (n *Network) cutHash() uint64 {
	var h uint64
	for _, a := range n.replicas {
		for _, b := range n.replicas {
			if n.paths[a][b].cut {
				h = mix(mix(h, uint64(n.nodes[a].id)), uint64(n.nodes[b].id))
			}
		}
	}
	return h
}

// resume re-arms, in connection order, every direction that waits for a cut
// or a clog that is gone: a direction stalled on a path no longer cut
// delivers its held frames now, in order, and its TCP timeout is cancelled;
// a direction armed at the end of a clog that was lifted early re-arms
// sooner.
func (n *Network) resume() {
	now := n.sched.Now()
	for _, c := range n.live {
		for s := range 2 {
			d := &c.dir[s]
			p := d.path()
			switch {
			case d.stall == stallCut && !p.cut:
				d.stall = stallNone
				d.timeoutArg = 0
				d.arm(now)
			case d.stall == stallNone && d.deliverArg != 0 && now >= p.clogUntilNs:
				if want := max(d.q.front().deliverAtNs, now); d.armedAtNs > want {
					d.arm(want)
				}
			}
		}
	}
}

// corrupt flips one bit of frame, drawn uniformly among the bits of its
// protected ranges, and reports whether it did: a frame with no protected
// range (a client or handshake frame, an unsealed prepare) stays intact.
func (n *Network) corruptible(frame []byte) bool {
	n.ranges = wire.ProtectedRanges(frame, n.ranges[:0])
	for _, r := range n.ranges {
		if r.To > r.From {
			return true
		}
	}
	return false
}

// corrupt flips one bit of frame, drawn uniformly among the bits of its
// protected ranges, and reports whether it did (corruptible).
func (n *Network) corrupt(frame []byte) bool {
	n.ranges = wire.ProtectedRanges(frame, n.ranges[:0])
	bitsTotal := 0
	for _, r := range n.ranges {
		bitsTotal += (r.To - r.From) * 8
	}
	if bitsTotal == 0 {
		return false
	}
	bit := n.rngCorrupt.IntN(bitsTotal)
	for _, r := range n.ranges {
		if w := (r.To - r.From) * 8; bit >= w {
			bit -= w
			continue
		}
		pos := r.From*8 + bit
		frame[pos/8] ^= 1 << (pos % 8)
		return true
	}
	panic("network: corruption bit beyond the protected ranges")
}

// FaultsOff stops new faults for the liveness phase: no more random resets,
// partitions, clogs or corruption. What is already there stays: clogs expire
// at their drawn end, and a partition stays as it is (frozen, as TigerBeetle
// freezes links outside the liveness core) until Heal; frames stalled across
// it still time out. Scripted faults (Partition, Clog, Reset, filters) still
// work.
func (n *Network) FaultsOff() { n.faultsOn = false }

// FaultsOn reports whether random faults are on.
func (n *Network) FaultsOn() bool { return n.faultsOn }

// Heal ends any partition among nodes and unclogs the paths among them, both
// directions; cuts and clogs between them and other nodes stay. Frames held
// on the healed paths are delivered at once, in order.
func (n *Network) Heal(nodes []NodeID) {
	now := n.sched.Now()
	idx := make([]int32, len(nodes))
	for i, id := range nodes {
		idx[i] = n.lookup(id)
	}
	for _, a := range idx {
		for _, b := range idx {
			p := &n.paths[a][b]
			p.cut = false
			p.clogUntilNs = min(p.clogUntilNs, now)
		}
	}
	n.clogScanNs = 0 // unclogged paths are eligible again
	if n.partitioned && !n.anyCut() {
		n.partitioned = false
		n.partitionChangedNs = now
	}
	n.resume()
}

func (n *Network) anyCut() bool {
	for _, a := range n.replicas {
		for _, b := range n.replicas {
			if n.paths[a][b].cut {
				return true
			}
		}
	}
	return false
}

// SetPrimaryHint tells the network how to find the primary, for
// PartitionPrimary: hint returns the replica the harness sees as primary,
// if any. It must draw no randomness.
func (n *Network) SetPrimaryHint(hint func() (NodeID, bool)) { n.primaryHint = hint }

// Partition starts a scripted partition, replacing any other: the replicas
// in side on one side, the other replicas on the other. Symmetric, it cuts
// both directions; oneWay, side can send to the others but not receive from
// them. It lasts until Heal, or, while random partitions are on, until a
// tick heals it. Every node in side must be a replica, and neither side may
// be empty.
func (n *Network) Partition(side []NodeID, oneWay bool) {
	in := make([]uint8, len(n.replicas))
	k := 0
	for _, id := range side {
		idx := n.lookup(id)
		if !n.nodes[idx].replica {
			panic(fmt.Sprintf("network: partition side holds client %d", id))
		}
		for i, r := range n.replicas {
			if r == idx && in[i] == sideRest {
				in[i] = sideCut
				k++
			}
		}
	}
	if k == 0 || k == len(n.replicas) {
		panic("network: a partition side is empty")
	}
	n.setCuts(in, oneWay)
}

// Split starts a scripted partition of the replicas into components,
// replacing any other: a replica reaches the replicas of its own component
// and no other, both directions. Every replica must be in exactly one
// component, and there must be at least two. Like Partition, it lasts until
// Heal (or a random heal, while random partitions are on). The rollback
// nemesis uses it for the shapes two sides cannot make: an old primary and
// a lagging replica each alone, then joined by one replica of the majority.
func (n *Network) Split(components [][]NodeID) {
	if len(components) < 2 {
		panic("network: a split needs two components")
	}
	component := make([]int, len(n.nodes))
	for i := range component {
		component[i] = -1
	}
	for c, ids := range components {
		if len(ids) == 0 {
			panic("network: a split component is empty")
		}
		for _, id := range ids {
			idx := n.lookup(id)
			if !n.nodes[idx].replica {
				panic(fmt.Sprintf("network: split component holds client %d", id))
			}
			if component[idx] != -1 {
				panic(fmt.Sprintf("network: replica %d in two split components", id))
			}
			component[idx] = c
		}
	}
	for _, a := range n.replicas {
		if component[a] == -1 {
			panic(fmt.Sprintf("network: replica %d in no split component", n.nodes[a].id))
		}
	}
	n.replaceCuts(true, func(from, to int) bool { return component[n.replicas[from]] != component[n.replicas[to]] })
}

// CutPaths starts a scripted partition of any shape, replacing any other:
// the path between two replicas, from -> to, is cut where cut says so.
// Like Split, it lasts until Heal (or a random heal, while random
// partitions are on). The view-change fault nemesis uses it to withhold a
// primary's acknowledgements from some backups while another reaches it
// both ways. A cut that cuts nothing is refused: Heal says that.
func (n *Network) CutPaths(cut func(from, to NodeID) bool) {
	any := false
	for _, a := range n.replicas {
		for _, b := range n.replicas {
			any = any || (a != b && cut(n.nodes[a].id, n.nodes[b].id))
		}
	}
	if !any {
		panic("network: a scripted cut that cuts no path")
	}
	n.replaceCuts(true, func(from, to int) bool {
		return from != to && cut(n.nodes[n.replicas[from]].id, n.nodes[n.replicas[to]].id)
	})
}

// Clog clogs the path from -> to until untilNs (scripted): frames on it
// wait, none are lost. A clog already lasting longer is kept.
func (n *Network) Clog(from, to NodeID, untilNs int64) {
	p := &n.paths[n.lookup(from)][n.lookup(to)]
	if untilNs > p.clogUntilNs {
		p.clogUntilNs = untilNs
		p.clogAtNs = 0
		n.clogScanNs = min(n.clogScanNs, untilNs) // eligible again from then
		n.stats.Clogs++
	}
}

// Partitioned reports whether some path between replicas is cut.
func (n *Network) Partitioned() bool { return n.partitioned }

// Cut reports whether a partition stops frames from -> to now.
func (n *Network) Cut(from, to NodeID) bool { return n.paths[n.lookup(from)][n.lookup(to)].cut }

// Clogged reports whether the path from -> to is clogged now.
func (n *Network) Clogged(from, to NodeID) bool {
	return n.sched.Now() < n.paths[n.lookup(from)][n.lookup(to)].clogUntilNs
}
