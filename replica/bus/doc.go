// Package bus is the message bus logic of one replica of Apache Iggy's replica
// plane, sans-I/O: directional dialing with a reconnect sweep, the replica
// handshake (wire.md 6.4, auth off and on, key rotation, TLS channel binding),
// the receive-side checks every consensus frame passes before the replica sees
// it (wire.md 1.1 and 4.1, plus correction 6), and the bounded, never-blocking
// send path of Iggy's per-peer queues (wire.md 1).
//
// The bus owns no sockets, no goroutines and no clock. It talks to the world
// through the [Transport] it is given (dial, send, close, and the number of
// frames in flight on a connection); the world talks back through the Bus's
// event methods ([Bus.Connected], [Bus.DialFailed], [Bus.Accepted],
// [Bus.Received], [Bus.Closed]) and time arrives as [Bus.Tick], one call per
// 10 ms tick. Consensus frames that pass every check go to the [Handler].
// Nonces come from the *rand.Rand the caller hands to [New] (the replica's own
// seeded stream, standing in for Iggy's CSPRNG), so one seed gives one
// sequence of transport calls.
//
// # Connections
//
// A replica dials only peers with a strictly greater id and accepts only from
// strictly lower ids, so each pair has one dialer. Every ReconnectTicks (and
// on the first tick) the bus dials, in id order, every higher peer that has
// neither an established connection nor a dial or handshake in progress. The
// whole handshake, the dial included, must finish within HandshakeGraceTicks
// of the Dial (dialer) or the Accepted (acceptor), else the bus closes the
// connection. A connection that closes, for any reason and in any phase, is
// forgotten; the sweep redials it if this replica is the dialer.
//
// Duplicate connections: when a handshake completes on an inbound connection
// from a peer that already has an established connection, the NEW connection
// wins and the old one is closed (counted in PeerStats.ConnectionsReplaced).
// Iggy keeps the first registered connection and drops the new one. A dialer
// dials only when it holds no connection to that peer, so a new inbound
// connection proves the dialer has given up every older one: the older one is
// dead or half-open, and keeping it would leave the pair disconnected until
// the acceptor noticed, while the dialer's next attempt waited a whole
// reconnect period. A deliberate difference from Iggy (DEVIATIONS.md).
//
// # Receive path
//
// Frames received on an established connection pass, in this order (wire.md
// 4.1): the framing rules with FrameSizeMax (a violation closes the
// connection); command dispatch, which drops commands 0-4, Request (5, no
// replica-plane sender exists: wire.md 15), the client-bound Reply (8) and
// Eviction (13), and handshake frames (14-16); [wire.Validate] (bit patterns,
// frame seal, per-command rules: a violation drops the frame, the connection
// stays up); and replica < ReplicaCount (wire.md correction 6: rejected on
// every command). Every drop is counted per peer, by wire.Rule or by
// [DropRule]. What passes is delivered exactly once, in arrival order.
//
// # Send path
//
// [Bus.Send] hands a frame to the transport only when the peer's connection is
// established and holds fewer than PeerQueueFramesMax frames in flight (Iggy's
// try-send on a bounded queue); otherwise it drops the frame silently and
// counts it. The bus buffers nothing.
//
// # Errors
//
// Nothing a peer sends can make the bus panic. Programmer errors do: a bad
// Config, a frame to send that breaks the framing rules or is not a consensus
// frame, an event that contradicts the transport contract (Connected for an
// accepted connection, a connection id reused), or re-entering an event
// method from the Transport.
package bus
