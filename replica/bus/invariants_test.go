package bus

import "fmt"

// checkInvariants verifies the bus's bookkeeping: the tests call it after
// every step.
func (b *Bus) checkInvariants() error {
	if len(b.conns) != len(b.byID) {
		return fmt.Errorf("%d connections listed, %d indexed", len(b.conns), len(b.byID))
	}
	established := make([]int, len(b.peers))
	pending := 0
	for _, x := range b.conns {
		if b.byID[x.id] != x {
			return fmt.Errorf("connection %d listed but not indexed", x.id)
		}
		switch x.role {
		case roleDialer:
			if !x.peerKnown || x.peer <= b.cfg.Replica || x.peer >= b.cfg.ReplicaCount {
				return fmt.Errorf("outbound connection %d to peer %d", x.id, x.peer)
			}
			switch x.phase {
			case phaseDialing, phaseAwaitChallenge:
				if b.peers[x.peer].outbound != x {
					return fmt.Errorf("outbound connection %d is not peer %d's dial", x.id, x.peer)
				}
				if x.phase == phaseAwaitChallenge && !b.cfg.Auth {
					return fmt.Errorf("connection %d awaits a Challenge without auth", x.id)
				}
			case phaseEstablished:
			default:
				return fmt.Errorf("outbound connection %d in phase %d", x.id, x.phase)
			}
		case roleAcceptor:
			switch x.phase {
			case phaseAwaitHello:
				pending++
				if x.peerKnown {
					return fmt.Errorf("inbound connection %d knows its peer before a Hello", x.id)
				}
			case phaseAwaitFinish:
				pending++
				if !b.cfg.Auth {
					return fmt.Errorf("connection %d awaits a Finish without auth", x.id)
				}
				fallthrough
			case phaseEstablished:
				if !x.peerKnown || x.peer >= b.cfg.Replica {
					return fmt.Errorf("inbound connection %d from peer %d", x.id, x.peer)
				}
			default:
				return fmt.Errorf("inbound connection %d in phase %d", x.id, x.phase)
			}
		default:
			return fmt.Errorf("connection %d has no role", x.id)
		}
		if x.phase == phaseEstablished {
			established[x.peer]++
			if b.peers[x.peer].established != x {
				return fmt.Errorf("established connection %d is not peer %d's", x.id, x.peer)
			}
		} else if x.deadlineTick <= b.nowTick {
			return fmt.Errorf("connection %d outlived its handshake grace", x.id)
		}
	}
	if pending != b.acceptsPending || pending > AcceptsPendingMax {
		return fmt.Errorf("%d inbound handshakes pending, counted %d", pending, b.acceptsPending)
	}
	for p := range b.peers {
		ps := &b.peers[p]
		if established[p] > 1 {
			return fmt.Errorf("peer %d has %d established connections", p, established[p])
		}
		if (ps.established != nil) != (established[p] == 1) {
			return fmt.Errorf("peer %d's established connection is not tracked", p)
		}
		if ps.outbound != nil {
			if ps.established != nil {
				return fmt.Errorf("peer %d dialed while established", p)
			}
			if b.byID[ps.outbound.id] != ps.outbound {
				return fmt.Errorf("peer %d's dial is not tracked", p)
			}
		}
		if p == int(b.cfg.Replica) && (ps.established != nil || ps.outbound != nil) {
			return fmt.Errorf("connected to itself")
		}
	}
	if b.inEvent {
		return fmt.Errorf("still inside an event")
	}
	return nil
}
