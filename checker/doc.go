// Package checker judges a run: the replicas' events (every prepare built,
// every commit, every view started, every message sent) and the clients'
// history (every invocation and how it ended), against the invariants of
// ../shared/DESIGN.md "What the checker verifies", as far as the metadata
// plane can show them:
//
//   - canonical history: every replica commits op k+1 right after op k, the
//     prepare at op k has one identity everywhere and chains to op k-1 by its
//     parent, and nothing committed is ever replaced, across crashes,
//     restarts and view changes; timestamps strictly increase along the log;
//   - one prepare per (group, view, op), and one StartView per (group, view);
//   - a replica's view after a restart is at least the highest view it sent
//     a message in;
//   - no phantom commits: every client op in the log was sent by a client
//     with that request number and request checksum;
//   - exactly once: no (client, request) commits twice;
//   - linearizability: every reply a client saw is the reply the reference
//     model gives when the log is applied in canonical order, and the
//     canonical order respects real time (an op that completed before
//     another was invoked comes first).
//
// Checks run incrementally, as events arrive in time order, so the first
// violation stops the run where it happened. Violations are named in the
// field's vocabulary (Jepsen's and Adya's where they apply) and carry the
// evidence: replicas, ops, identities, times.
package checker
