// Package network simulates the TCP connections of Apache Iggy's replica
// plane, and of its clients, inside vopr's deterministic event loop
// (../../shared/DESIGN.md, "Faults").
//
// Unlike TigerBeetle's packet simulator, which moves datagrams that may be
// dropped, duplicated and reordered, this package models connections, because
// Iggy's message bus runs over TCP: a connection delivers whole frames in
// order, once each, or dies. Its faults are therefore the ones TCP shows an
// application:
//
//   - delays drawn per frame, never reordering a connection direction;
//   - connection resets (random, on a node going down, on an overflowing
//     send buffer, on a TCP timeout across a partition), which lose every
//     frame in flight on the connection, in both directions;
//   - partitions among replicas (isolate one, uniform size, uniform
//     partition; symmetric or one way) that stall frames across the cut
//     until the partition heals or the connection times out;
//   - path clogging, which stalls a path without loss;
//   - rare single-bit corruption, only inside bytes a seal, a prepare
//     identity or a body checksum covers (wire.ProtectedRanges), so every
//     corruption is one the receiver can detect.
//
// Scenario tests add filters that hold or drop chosen frames on chosen paths.
//
// Simplifications, on purpose: acknowledgements are not modelled, so a
// one-way cut stalls only the cut direction, and a connection resets only
// when frames in a cut direction stall past the TCP timeout (an idle
// connection across a cut survives, as TCP without keepalives does). A dial
// needs both directions, so a one-way cut refuses it. Clogs never time out.
//
// Events the loop sees (kind, node, hash), for its digest:
//
//	network.connect      acceptor  connection id    a dial completed
//	network.dial_failed  dialer    connection id    a dial was refused
//	network.deliver      receiver  XXH3(frame)^id   a frame was delivered
//	network.drop         receiver  XXH3(frame)^id   a Drop filter lost a frame
//	network.closed       receiver  connection id    an end saw Closed
//	network.timeout      receiver  connection id    a TCP timeout reset it
//	network.tick         -1        what changed     a partition began or ended, a path clogged
//
// Anything else (a stale event, a frame stalling on a cut, a clog or a
// filter) fires with an empty kind and leaves the digest alone.
//
// Determinism: the package starts no goroutine, reads no clock, draws only
// from the math/rand/v2 generators handed in (one per labelled fault site),
// and iterates nodes and connections in id order, never a map. Every
// callback to an Endpoint runs inside an event the loop fires, never inside
// a call into the Network, so a caller is never re-entered.
//
// The steady path (Send, then delivery) allocates nothing: frame bytes live
// in buffers from a free list the Network owns, and every event is scheduled
// on a long-lived object (a connection direction, the network ticker) with a
// generation argument, not on a fresh closure.
package network
