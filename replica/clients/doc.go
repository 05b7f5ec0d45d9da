// Package clients is the metadata plane's client table: one entry per
// registered client id, holding its session epoch, its acting user, its
// request watermark and a ring of its last committed replies
// (../../shared/spec/consensus.md "Client table", client-ops.md 2.4 and 6).
//
// The table is committed state: every replica applies the same Register,
// Logout and metadata commits in log order and ends with the same table. It
// is pure and deterministic: no clocks, no randomness, no goroutines, and no
// map iteration that can be observed (the index map is used for lookups only;
// every walk follows the fixed slot array).
//
// # Who calls what
//
// On the primary, for a client Request h (already passed by wire.Validate):
//
//  1. the caller answers "a prepare from this client is already in flight"
//     and "not a caught-up primary" itself (client-ops.md 2.4 step 6.2, first
//     two rules: B 57 on the shell path, silence on the raw path; silence for
//     Register on both);
//  2. CheckRequest(h) gives the rest of the preflight verdict: VerdictNew
//     (dispatch), VerdictReplay (send the cached Reply frame), VerdictEvict
//     (send an Eviction with the reason), VerdictDrop (silence), or
//     VerdictAlreadyApplied (the B-shape refusal 59 on the shell path; the
//     raw consensus-plane path is silent there);
//  3. only after VerdictNew does the metadata package decode the body
//     (Preflight) and project it (Project).
//
// On every replica, at commit of a metadata prepare, in op order:
//
//   - Register: CommitRegister(prepare.UserID, BuildReply(prepare, nil));
//   - Logout: CommitLogout(prepare.Client);
//   - any other metadata op: CommitRequest(BuildReply(prepare, replyBody)).
//
// # Slots and eviction
//
// Entries live in a fixed array of Capacity slots; a new client takes the
// lowest free slot. When the table is full, a new Register evicts the entry
// whose newest cached reply has the oldest commit op, ties to the lowest slot
// (in practice there are no ties: each committed op answers one client). The
// evicted client is returned so that the replica can tell it NoSession; its
// next request is answered with an Eviction NoSession by CheckRequest anyway.
//
// Encode writes ICT2 (wire.md 8.3) in slot order, compacted, as Iggy does;
// Decode puts the entries back into slots 0..n-1. Digest is independent of
// slot positions (entries in client-id order), so a replica that installed a
// transferred table digests equal to one that built it live.
//
// # Differences from Iggy's ClientTable
//
//   - CommitRegister takes the Register's cached reply frame (Iggy caches it
//     too: every ICT2 ring holds at least one reply), not only the epoch.
//   - A second commit of the watermark request (possible only when a retry
//     slips past the in-flight check) makes its reply the newest of the ring;
//     Iggy overwrites the old reply in place, so its newest reply is no
//     longer last and an ICT2 round trip changes the eviction key.
//   - Decode refuses more entries than the configured capacity (Iggy grows
//     the table), a client id 0, and a cached reply addressed to another
//     client.
//   - Commit paths assert what a correct log guarantees (a Register reply's
//     commit is its op, a rebind moves the epoch forward, a cached reply is a
//     committed Reply frame of exactly its size) and panic otherwise.
package clients
