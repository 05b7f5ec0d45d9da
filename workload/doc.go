// Package workload is the VOPR's clients: simulated clients speaking the
// client protocol (wire.md 5.20, client-ops.md's [raw] consensus-plane path)
// to the replicas' client ports. Each client registers for a session, then
// sends a seeded mix of the metadata operations the replica supports, one at
// a time, with strictly increasing request numbers. On a timeout it sends
// the same request (same request number, same bytes) to the next replica in
// turn; on an eviction it records the request in flight as indefinite
// (outcome unknown), registers again under a fresh id, and never resends it.
// Every invocation and every completion goes to a Recorder with its time:
// that history is what the checker judges.
//
// A client is a state machine like the replica: it talks to the network
// through a Transport it declares, and the harness feeds it ticks and
// connection events.
package workload
