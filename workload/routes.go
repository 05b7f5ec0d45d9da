package workload

import (
	"encoding/binary"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Route hints: a request is admitted only by its group's primary (the
// metadata primary for a metadata op, the partition group's primary for a
// send or an offset op), and those primaries differ from group to group.
// A client that only walked replica to replica on TransientNotAccepted,
// holding longer after each refusal, would walk for every request that
// changes group: some 150 ticks a request with six replicas (long seed
// 1079834944: 93 ticks a commit in the liveness phase, too slow to finish
// its work). Iggy's SDK knows the leader (it rechecks it every 2 s,
// client-ops.md 6.5), so the client remembers, per route, the replica that
// last admitted a request of it, and goes there first; a refusal there
// forgets the hint and the walk goes on as before (DEVIATIONS.md 66).

// routeHintsMax bounds the hints a client keeps: the workload's pools of
// stream, topic and partition names give a few dozen routes.
const routeHintsMax = 64

// routeMetadata is the route of every metadata op.
const routeMetadata = "metadata"

// routeOf names where a request is admitted: "" for a Register or a
// Logout (any replica forwards them) and for an op the client cannot place,
// routeMetadata for the other metadata ops, and for a partition op its
// stream, topic and partitioning (a balanced send's partition is the
// server's choice: its route is the topic's).
func routeOf(inv Invocation) string {
	switch {
	case inv.Operation == wire.OperationRegister || inv.Operation == wire.OperationLogout:
		return ""
	case inv.Operation == wire.OperationSendMessages:
		if len(inv.Body) < 4 {
			return ""
		}
		n := int(binary.LittleEndian.Uint32(inv.Body))
		if n > len(inv.Body)-4 {
			return ""
		}
		return "send " + string(inv.Body[4:4+n])
	case inv.Operation == wire.OperationStoreConsumerOffset || inv.Operation == wire.OperationDeleteConsumerOffset:
		q, err := partition.DecodeOffsetRequest(inv.Body, inv.Operation == wire.OperationStoreConsumerOffset)
		if err != nil || !q.HasPartition {
			return ""
		}
		return fmt.Sprintf("offset %v %v %d", q.Stream, q.Topic, q.Partition)
	case inv.Operation.IsPartition() || inv.Operation == wire.OperationNonReplicated:
		return ""
	}
	return routeMetadata
}

// learnRoute records that target admitted a request of route.
func (c *Client) learnRoute(route string, target int) {
	if route == "" {
		return
	}
	if c.routes == nil {
		c.routes = make(map[string]int)
	}
	if _, ok := c.routes[route]; !ok && len(c.routes) >= routeHintsMax {
		clear(c.routes)
	}
	c.routes[route] = target
}

// forgetRoute drops route's hint: its replica refused.
func (c *Client) forgetRoute(route string) {
	if route != "" {
		delete(c.routes, route)
	}
}

// followRoute moves the home connection to the replica route's hint names,
// if that is not where it is, and reports whether it did: the request in
// flight then goes out once the new connection is up (Connected).
func (c *Client) followRoute(route string) bool {
	target, ok := c.routes[route]
	if route == "" || !ok || target == c.target {
		return false
	}
	if c.state != connIdle {
		c.t.Close(c.conn)
	}
	c.state = connIdle
	c.target = target
	c.RouteMoves++
	c.dial()
	return true
}
