package network

import (
	"fmt"
	"slices"
)

// FilterID names a filter; ids grow, so a newer filter has a larger id.
type FilterID uint64

// FilterAction is what a filter does to the frames it matches.
type FilterAction uint8

const (
	// Hold keeps a matching frame aside, with every frame behind it on its
	// connection direction (TCP order), until Release or RemoveFilter.
	Hold FilterAction = iota
	// Drop loses a matching frame (LostFiltered); the frames behind it
	// continue. No TCP loses a frame in the middle of a stream: this is a
	// scenario tool, like TigerBeetle's link filters.
	Drop
)

// Filter selects frames for a scenario test. A frame is matched when it
// reaches the head of its connection direction and is due, after partitions
// and clogs let it pass, against the filters in id order; the first match
// acts.
type Filter struct {
	// From and To select the path; AnyNode matches every node.
	From, To NodeID
	// Match selects frames on that path; nil matches every frame. frame is
	// valid only during the call, and Match must not call the Network.
	Match func(frame []byte) bool
	// Action is what happens to a matching frame.
	Action FilterAction
}

type filterEntry struct {
	Filter
	id       FilterID
	from, to int32 // node indices, -1 for any
}

// AddFilter installs f and returns its id.
func (n *Network) AddFilter(f Filter) FilterID {
	if f.Action != Hold && f.Action != Drop {
		panic(fmt.Sprintf("network: undefined filter action %d", f.Action))
	}
	e := filterEntry{Filter: f, from: -1, to: -1}
	if f.From != AnyNode {
		e.from = n.lookup(f.From)
	}
	if f.To != AnyNode {
		e.to = n.lookup(f.To)
	}
	n.lastFilter++
	e.id = n.lastFilter
	n.filters = append(n.filters, e)
	return e.id
}

// Release lets the frames filter id holds go, in order: each continues past
// this filter (and older ones) and meets only newer filters. The filter stays
// installed and holds the next frames it matches.
func (n *Network) Release(id FilterID) {
	if id == 0 || id > n.lastFilter {
		panic(fmt.Sprintf("network: unknown filter %d", id))
	}
	for _, c := range n.live {
		for s := range 2 {
			d := &c.dir[s]
			if d.stall != stallHeld || d.q.front().heldBy != id {
				continue
			}
			head := d.q.front()
			head.heldBy = 0
			head.filterAfter = id
			d.stall = stallNone
			d.arm(head.deliverAtNs)
		}
	}
}

// RemoveFilter uninstalls filter id and releases what it holds. Removing a
// filter twice does nothing.
func (n *Network) RemoveFilter(id FilterID) {
	if id == 0 || id > n.lastFilter {
		panic(fmt.Sprintf("network: unknown filter %d", id))
	}
	n.filters = slices.DeleteFunc(n.filters, func(e filterEntry) bool { return e.id == id })
	n.Release(id)
}

// Filters reports how many filters are installed: a scenario that must
// leave none (the VOPR's liveness phase, which Heal does not reach) checks
// it.
func (n *Network) Filters() int { return len(n.filters) }

// match returns the first filter that acts on head, due on d, or nil.
func (n *Network) match(d *dir, head *inflight) *filterEntry {
	from, to := d.from(), d.to()
	for i := range n.filters {
		f := &n.filters[i]
		if f.id <= head.filterAfter || f.from >= 0 && f.from != from || f.to >= 0 && f.to != to {
			continue
		}
		if f.Match == nil || f.Match(head.buf) {
			return f
		}
	}
	return nil
}
