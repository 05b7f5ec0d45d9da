package network_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/iggy-vopr/vopr/network"
)

// cutsOf returns, per replica, whether any path from or to it is cut.
func cutsOf(w *world, r int) []bool {
	touched := make([]bool, r)
	for a := range r {
		for b := range r {
			if w.net.Cut(network.NodeID(a), network.NodeID(b)) {
				touched[a], touched[b] = true, true
			}
		}
	}
	return touched
}

// onEachPartition calls f once at the first tick of each random partition
// (a heal between two partitions is needed to see the second).
func onEachPartition(w *world, f func()) {
	wasPartitioned := false
	startProbe(w, func(int64) {
		p := w.net.Partitioned()
		if p && !wasPartitioned {
			f()
		}
		wasPartitioned = p
	})
}

// TestBridgePartitions: a bridge partition leaves exactly one replica with
// no cut path, and splits the others into two non-empty groups with every
// path between the groups cut (one way or both, as the symmetry says) and
// none within a group.
func TestBridgePartitions(t *testing.T) {
	for _, sym := range []network.PartitionSymmetry{network.PartitionSymmetric, network.PartitionOneWay} {
		for _, replicas := range []int{3, 4, 5, 6} {
			t.Run(fmt.Sprintf("%v/replicas=%d", sym, replicas), func(t *testing.T) {
				o := quietOptions()
				o.PartitionMode, o.PartitionSymmetry = network.PartitionBridge, sym
				o.PartitionProbability, o.UnpartitionProbability = 0.3, 0.2
				o.PartitionStabilityMinTicks, o.UnpartitionStabilityMinTicks = 6, 3
				w := newWorld(t, 11, o, replicas, 1)
				partitions := 0
				bridges := make([]int, replicas)
				onEachPartition(w, func() {
					partitions++
					touched := cutsOf(w, replicas)
					bridge := -1
					for r, c := range touched {
						if !c {
							if bridge >= 0 {
								t.Fatalf("replicas %d and %d both reach everyone: not a bridge partition", bridge, r)
							}
							bridge = r
						}
					}
					if bridge < 0 {
						t.Fatal("no replica bridges the partition")
					}
					bridges[bridge]++
					// Group the others by the first one: cut from it means the other group.
					first := -1
					group := make([]int, replicas)
					for r := range replicas {
						if r == bridge {
							continue
						}
						if first < 0 {
							first = r
						}
						cross := w.net.Cut(network.NodeID(first), network.NodeID(r)) || w.net.Cut(network.NodeID(r), network.NodeID(first))
						group[r] = map[bool]int{false: 1, true: 2}[cross]
					}
					sizes := map[int]int{}
					for a := range replicas {
						if a == bridge {
							continue
						}
						sizes[group[a]]++
						for b := range replicas {
							if b == bridge || a == b {
								continue
							}
							ab, ba := w.net.Cut(network.NodeID(a), network.NodeID(b)), w.net.Cut(network.NodeID(b), network.NodeID(a))
							switch {
							case group[a] == group[b] && (ab || ba):
								t.Fatalf("path between %d and %d cut within one group", a, b)
							case group[a] != group[b] && !ab && !ba:
								t.Fatalf("path between %d and %d of different groups not cut", a, b)
							case group[a] != group[b] && sym == network.PartitionSymmetric && ab != ba:
								t.Fatalf("symmetric partition cuts %d -> %d %v but %d -> %d %v", a, b, ab, b, a, ba)
							case group[a] != group[b] && sym == network.PartitionOneWay && ab == ba:
								t.Fatalf("one-way partition cuts both or neither of %d <-> %d", a, b)
							}
						}
					}
					if sizes[1] == 0 || sizes[2] == 0 {
						t.Fatalf("groups of %v around bridge %d: one is empty", sizes, bridge)
					}
				})
				w.run(30_000 * ms)
				if partitions < 20 {
					t.Fatalf("only %d partitions in 30 s", partitions)
				}
				for r, n := range bridges {
					if n == 0 {
						t.Errorf("replica %d was never the bridge in %d partitions", r, partitions)
					}
				}
			})
		}
	}
}

// TestBridgeWithTwoReplicas: with no third replica to bridge two sides, a
// bridge partition falls back to isolating one replica: the path between
// the two is cut (one way or both, as the symmetry says), and each replica
// is the isolated one some of the time.
func TestBridgeWithTwoReplicas(t *testing.T) {
	for _, sym := range []network.PartitionSymmetry{network.PartitionSymmetric, network.PartitionOneWay} {
		t.Run(sym.String(), func(t *testing.T) {
			o := quietOptions()
			o.PartitionMode, o.PartitionSymmetry = network.PartitionBridge, sym
			o.PartitionProbability, o.UnpartitionProbability = 0.3, 0.2
			o.PartitionStabilityMinTicks, o.UnpartitionStabilityMinTicks = 6, 3
			w := newWorld(t, 5, o, 2, 1)
			partitions := 0
			cutFrom := [2]int{} // partitions in which replica r cannot receive from the other
			onEachPartition(w, func() {
				partitions++
				in0, in1 := w.net.Cut(1, 0), w.net.Cut(0, 1)
				switch {
				case !in0 && !in1:
					t.Fatal("a bridge partition of two replicas cut nothing")
				case sym == network.PartitionSymmetric && in0 != in1:
					t.Fatalf("symmetric fallback cuts 1 -> 0 %v but 0 -> 1 %v", in0, in1)
				case sym == network.PartitionOneWay && in0 == in1:
					t.Fatal("one-way fallback cuts both directions")
				}
				if in0 {
					cutFrom[0]++
				}
				if in1 {
					cutFrom[1]++
				}
			})
			w.run(30_000 * ms)
			if partitions < 20 || cutFrom[0] == 0 || cutFrom[1] == 0 {
				t.Fatalf("%d partitions, replica 0 cut off in %d, replica 1 in %d: want both sides over at least 20", partitions, cutFrom[0], cutFrom[1])
			}
		})
	}
}

// TestPrimaryPartitions: a primary partition puts the replica the hint
// names on a minority side; with no primary it still partitions.
func TestPrimaryPartitions(t *testing.T) {
	for _, replicas := range []int{2, 3, 5, 6} {
		t.Run(fmt.Sprintf("replicas=%d", replicas), func(t *testing.T) {
			o := quietOptions()
			o.PartitionMode = network.PartitionPrimary
			o.PartitionProbability, o.UnpartitionProbability = 0.3, 0.2
			o.PartitionStabilityMinTicks, o.UnpartitionStabilityMinTicks = 6, 3
			w := newWorld(t, 13, o, replicas, 1)
			primary, known := network.NodeID(replicas-1), true
			w.net.SetPrimaryHint(func() (network.NodeID, bool) { return primary, known })
			partitions, unknown := 0, 0
			onEachPartition(w, func() {
				partitions++
				side, other, _ := cutSides(t, w, replicas)
				if !known {
					unknown++
					return
				}
				minority := side
				if len(other) < len(side) || (len(other) == len(side) && !slices.Contains(side, primary)) {
					minority = other
				}
				if !slices.Contains(minority, primary) || 2*len(minority) >= replicas && replicas > 2 {
					t.Fatalf("primary %d not on a minority side: %v / %v", primary, side, other)
				}
				// The next partitions name another primary, or none.
				primary = (primary + 1) % network.NodeID(replicas)
				known = partitions%5 != 0
			})
			w.run(30_000 * ms)
			if partitions < 20 || unknown == 0 {
				t.Fatalf("%d partitions, %d without a primary", partitions, unknown)
			}
		})
	}
}

// TestRepartition: with RepartitionProbability 1, a partition is always
// replaced by a new one, never healed.
func TestRepartition(t *testing.T) {
	o := quietOptions()
	o.PartitionMode = network.PartitionUniformSize
	o.PartitionProbability, o.UnpartitionProbability, o.RepartitionProbability = 0.3, 0.3, 1
	o.PartitionStabilityMinTicks, o.UnpartitionStabilityMinTicks = 4, 2
	w := newWorld(t, 17, o, 5, 1)
	var (
		started, changes bool
		healedAfter      int
		last             string
	)
	startProbe(w, func(nowNs int64) {
		p := w.net.Partitioned()
		if !p {
			if started {
				healedAfter++
			}
			return
		}
		started = true
		side, other, _ := cutSides(t, w, 5)
		now := fmt.Sprint(side, other)
		if last != "" && now != last {
			changes = true
		}
		last = now
	})
	w.run(30_000 * ms)
	st := w.net.Stats()
	switch {
	case !started:
		t.Fatal("no partition started")
	case healedAfter != 0:
		t.Fatalf("the network healed for %d ticks after its first partition", healedAfter)
	case !changes || st.Repartitions == 0 || st.Repartitions+1 != st.Partitions:
		t.Fatalf("changes %v, %d repartitions of %d partitions", changes, st.Repartitions, st.Partitions)
	}
}

// TestSplit: a scripted split cuts exactly the paths between replicas of
// different components, both ways, keeps client paths, heals with Heal,
// and rejects a replica left out or listed twice.
func TestSplit(t *testing.T) {
	w := newWorld(t, 3, quietOptions(), 5, 1)
	components := [][]network.NodeID{{0}, {3}, {1, 2, 4}}
	w.net.Split(components)
	in := map[network.NodeID]int{}
	for c, ids := range components {
		for _, id := range ids {
			in[id] = c
		}
	}
	requireCuts(t, w.net, func(a, b network.NodeID) bool { return in[a] != in[b] })
	w.net.Heal([]network.NodeID{0, 1, 2, 3, 4})
	if w.net.Partitioned() || w.net.Cut(0, 1) {
		t.Fatal("Heal left the split in place")
	}
	for _, bad := range [][][]network.NodeID{
		{{0, 1}, {2, 3}},       // replica 4 in no component
		{{0, 1}, {1, 2, 3, 4}}, // replica 1 twice
		{{0, 1, 2, 3, 4}},      // one component
		{{0, 1, 2, 3, 4}, {}},  // an empty one
		{{0, 1, 2, 3}, {4, 5}}, // a client
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Split(%v) did not panic", bad)
				}
			}()
			w.net.Split(bad)
		}()
	}
}

// CutPaths cuts exactly the replica paths its function names, never a
// client's, and refuses a cut of nothing.
func TestCutPaths(t *testing.T) {
	w := newWorld(t, 3, quietOptions(), 5, 1)
	// Replica 0 withholds: it hears only from 1; 3 is alone both ways.
	cut := func(from, to network.NodeID) bool {
		return (to == 0 && from != 1) || from == 3 || to == 3
	}
	w.net.CutPaths(cut)
	requireCuts(t, w.net, func(a, b network.NodeID) bool { return a != b && cut(a, b) })
	w.net.Heal([]network.NodeID{0, 1, 2, 3, 4})
	if w.net.Partitioned() || w.net.Cut(2, 0) {
		t.Fatal("Heal left the cut in place")
	}
	defer func() {
		if recover() == nil {
			t.Error("a cut of no path did not panic")
		}
	}()
	w.net.CutPaths(func(from, to network.NodeID) bool { return from == to })
}

// requireCuts checks, in a world of replicas 0..4 and client 5, that
// exactly the replica paths want names are cut, no client path is, and one
// partition was counted.
func requireCuts(t *testing.T, net *network.Network, want func(a, b network.NodeID) bool) {
	t.Helper()
	for a := range network.NodeID(5) {
		for b := range network.NodeID(5) {
			if got, want := net.Cut(a, b), want(a, b); got != want {
				t.Fatalf("path %d -> %d: cut %v, want %v", a, b, got, want)
			}
		}
		if net.Cut(a, 5) || net.Cut(5, a) {
			t.Fatalf("client path to replica %d cut", a)
		}
	}
	if !net.Partitioned() || net.Stats().Partitions != 1 {
		t.Fatalf("partitioned %v, partitions %d: want a partition counted", net.Partitioned(), net.Stats().Partitions)
	}
}
