package replica

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/clients"
	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Commit implements vsr.StateMachine for the metadata plane: every replica
// applies each committed prepare, in op order, to the client table and the
// state machine, and builds the reply every replica caches; the replica
// that holds the client's connection sends it.
func (r *Replica) Commit(frame []byte) {
	var p wire.PrepareHeader
	p.Decode(wire.HeaderOf(frame))
	body := frame[wire.HeaderSize:]
	var reply []byte
	forwarded := false // a Register or Logout, which may have come through a backup
	switch p.Operation {
	case wire.OperationRegister:
		forwarded = true
		reply = clients.BuildReply(p, nil)
		if evicted, did := r.table.CommitRegister(p.UserID, reply); did {
			r.evict(evicted, wire.EvictionNoSession)
		}
	case wire.OperationLogout:
		reply = clients.BuildReply(p, nil)
		r.table.CommitLogout(p.Client)
		forwarded = true
	default:
		if !p.Operation.IsMetadata() {
			panic(fmt.Sprintf("replica %d: committed op %d has operation %v, not a metadata one", r.cfg.Replica, p.Op, p.Operation))
		}
		reply = clients.BuildReply(p, r.state.Apply(p, body))
		r.table.CommitRequest(reply)
		if metadata.ChangesPartitions(p.Operation) {
			r.parts.reconcile()
		}
	}
	sent := r.sendToClient(p.Client, reply)
	r.env.Sink.Event(Event{Kind: EventReply, Replica: r.cfg.Replica, Client: p.Client, Request: p.Request,
		Op: p.Op, Frame: reply, Sent: sent})
	if forwarded {
		r.forwardApplied(&p, reply, sent)
		if p.Operation == wire.OperationLogout {
			r.unbind(p.Client) // a session's connection is unbound when it logs out
		}
	}
	if len(r.fwd.parked) > 0 {
		r.settleForwards(p.Op) // applied now; commit_min follows once Commit returns
	}
	r.maybeCheckpoint(&p)
}

// sendToClient sends a frame on the client's connection, if this replica
// has one.
func (r *Replica) sendToClient(client wire.U128, frame []byte) bool {
	c, ok := r.conns[client]
	if !ok {
		return false
	}
	return r.env.Clients.Send(c, frame)
}

// evict tells a client its session is over, if it is connected here. A
// single replica replays its log while its group is being built (VOPR seed
// 636): no client is connected then, and there is no view to stamp yet.
func (r *Replica) evict(client wire.U128, reason wire.EvictionReason) {
	sent := false
	if c, ok := r.conns[client]; ok {
		e := wire.EvictionHeader{Prefix: wire.Prefix{Cluster: r.cfg.Cluster(), View: r.metadata.View(), Replica: r.cfg.Replica},
			Client: client, Reason: reason}
		sent = r.env.Clients.Send(c, wire.BuildFrame(&e, nil))
	}
	r.env.Sink.Event(Event{Kind: EventEviction, Replica: r.cfg.Replica, Client: client, Reason: reason, Sent: sent})
}
