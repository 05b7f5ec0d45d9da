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
// The partition planes are checked with a model of their own (partition.go):
// per group the same canonical history, a DoViewChange of a log_view
// reaching the log its sender went Normal with in it, stamping (contiguous offsets,
// base_timestamp the prepare's, every checksum intact), no phantom batch,
// no duplicate message outside a retry of its send, and every acknowledged
// send at the offset it was committed at. A partition state transfer
// (partition_install.go) installs a committed state above what its replica
// applied, and it is the canonical log's state at its op: the segment log
// its batches, the consumer offsets what its offset operations stored.
//
// What a poll promises (PollMessages, a non-replicated read that whichever
// replica the client reached serves from its own state), and so all that is
// checked of one:
//
//   - committed data only: every record it returns is a committed batch of
//     that partition's canonical log, byte for byte as stamped (else "G1a
//     aborted read");
//   - a consistent slice: its records are consecutive batches of one
//     partition, with no gap between them (else "poll skip"), and the current
//     offset it reports is at least the last offset it returns;
//   - what its strategy selects from the serving replica's own committed
//     prefix, which ends at the current offset it reports: for Offset,
//     First, Last and Timestamp, the whole batches that hold an offset at or
//     after the start, until count messages are covered, fewer only where
//     the next batch would not fit the frame (else "poll misserved",
//     pollcomplete.go);
//   - nothing more. It may be stale: a backup behind its primary returns
//     less, or nothing, and says so with its current offset. It is not linearizable. And it may go backwards: a
//     replica that restarted lost its memory journals and applies its
//     partition logs again from op 1, so its visible offset drops back to
//     the end of what its segment log kept (DEVIATIONS.md 53) and grows back
//     as it repairs.
//   - a Next poll starts after an offset its consumer stored: its first
//     record holds offset 0 (nothing stored, a delete, a replica that lost
//     its memory) or the offset after one a committed Quorum store or an
//     invoked NoAck store (applied at the primary at once) set; any other
//     start read a store that never committed (else "poll skip"). Records
//     are whole batches, so the check is exact where batches hold one
//     message (a third of the mixes).
//
// Beyond the memory-loss bound (beyondf.go) the losses Iggy's design
// permits are counted by name instead of failing the run.
//
// Checks run incrementally, as events arrive in time order, so the first
// violation stops the run where it happened. Violations are named in the
// field's vocabulary (Jepsen's and Adya's where they apply) and carry the
// evidence: replicas, ops, identities, times.
package checker
