// Package journal is one replica's durable metadata journal and superblock,
// on a storage.Device.
//
// # Layout
//
// Zones(cfg) lays out, in order: "superblock" (SuperblockCopies copies, one
// chunk each, of a wire superblock record holding the VsrState), "headers"
// (one sector per slot: the redundant copy of the slot's 256-byte prepare
// header) and "prepares" (one chunk per slot, large enough for FrameSizeMax
// bytes plus a seal: the slot's whole prepare frame). Op k lives in slot
// k % SlotCount. No two ops ever share a sector. Every stored record is
// followed by a seal over all of it and zero padding (see record.go), and
// Format writes a distinct, self-checking empty marker into the header
// sector and the first sector of the prepare chunk of every slot of the
// first extent of the ring, so that after Format everything the journal
// reads is either a valid marker, valid data, or damage. The superblock
// records how many slots are formatted; the journal formats the next
// extents before it first writes beyond them, and Open reads only the
// formatted slots (extent.go; DEVIATIONS.md 42).
//
// # Writing
//
// Append writes the prepare chunk, syncs, writes the header copy, syncs, and
// only then runs done: from then on the op may be acknowledged. Because a
// header copy is written only after its prepare is durable, and ops in a
// slot never go back, the header ring is the record of what may have been
// acknowledged: a readable header copy holding the empty marker or an older
// op proves that the slot's newer ops never were (consensus.md, "torn tail
// versus corrupt head"). Truncate only forgets in memory; nothing is written,
// so the header ring keeps saying that truncated ops may have been
// acknowledged, which a later recovery honours by not nacking them.
//
// WriteState writes the superblock copies one after the other, each followed
// by a sync; updates are serialized and coalesced.
//
// # Recovery
//
// Open reads the superblock, then every formatted slot (a slot beyond the
// formatted extent is Empty without a read), and classifies every slot from
// what its header sector (down) and prepare chunk (across) hold:
//
//	                  | empty marker  | valid prepare p                 | damaged
//	------------------+---------------+---------------------------------+-----------------------
//	empty marker      | Empty         | Clean(p), header not written    | Torn
//	valid header h    | Corrupt(h)    | p == h, same identity: Clean(h) | h is the window's op
//	                  |               | p > h: Clean(p), not written    |   for the slot: Corrupt(h)
//	                  |               | p < h: Corrupt(h)               | else: Torn(h)
//	                  |               | p == h, other identity:         |
//	                  |               |   Conflict(h)                   |
//	damaged           | Faulty        | Clean(p), header rewritten      | Faulty
//
// "Damaged" is anything but a valid marker or valid record of this slot:
// unreadable (storage.ErrReadFault), failed seal or checksum, torn, garbage,
// nonzero padding, or a valid record of another slot (a misdirected write).
// A valid prepare must pass wire.Validate, carry a nonzero identity that
// verifies and a nonzero body seal, name this cluster, and have an op that
// maps to the slot. The window is (HeadOp-SlotCount, HeadOp], HeadOp being
// the highest op with any valid evidence (Recovery.HeadOp).
//
// What each cell lets the replica say about an op q of the slot
// (Knowledge), by one rule: held first; else the header copy decides.
//
//	Held        q is the op of a Clean slot.
//	HeaderOnly  q is the header copy's op (Corrupt(h), Torn(h), or the older
//	            header under Clean(p > h)), except in a Conflict.
//	Nackable    the header copy is the empty marker, or valid with op < q,
//	            and the prepare chunk is not damaged.
//	Unknown     everything else: a damaged header copy (Faulty), q older
//	            than the header copy's op, q == h in a Conflict, or q newer
//	            than the header copy's op over a damaged prepare chunk (Torn:
//	            the chunk may be q's prepare, whose header write a misdirect
//	            left undone; TigerBeetle makes such a slot faulty too).
//
// A Clean slot whose header copy is damaged gets its header copy rewritten
// by Open before it returns (the op may have been acknowledged: nothing is
// lost by recording so), and is then known as Clean(p) written.
//
// A fault-free crash can leave only: Empty; Clean (written or not); Torn
// (a prepare write tore); Corrupt(h) with a damaged prepare where a newer
// op's prepare tore (reported Torn when h is below the window); Conflict (a
// replacement of op h whose header write never landed); and Clean with a
// damaged header (the header write tore; Open rewrites it). Appends alone
// never leave Corrupt with an empty or older prepare, or Faulty, even across
// any number of crashes (that is what the rewrite buys); a Reconcile can,
// since it writes the prepare's empty marker before the header copy: a crash
// between them leaves Corrupt over the marker, and a torn header write there
// leaves the slot Faulty (found by checker/diskread's cross-check,
// TestReconcileCrashEveryPoint). Both are safe: Faulty makes the slot's op
// Unknown, never nacked.
//
// A false Nackable for an acknowledged op needs two misdirected writes in one
// slot: the header copy left stale by a misdirected header write and the
// prepare left stale by a misdirected prepare write; or, through the
// rewrite, the header copy damaged and the prepare left stale by a
// misdirected prepare write. A stale header over a damaged prepare used to
// be one too, and is Unknown now (VOPR seed 3637399597563653381: two
// replicas, whose nack quorum is one, truncated committed op 23 on it).
// Corruption and read errors alone never produce one, since they never make
// a copy valid; nor do crashes.
//
// The log_view comes only from the superblock (consensus.md correction 2).
// Held and HeaderOnly say what the disk holds, not that it belongs to the
// canonical log of the recovered log_view: a truncated op, or one replaced
// by a view change that the crash cut short, may come back. The replica
// checks identities (hash chain, StartView headers) before trusting them.
//
// # Rules
//
// No goroutines, clocks or global randomness; no map iteration. Every done
// runs from a device completion, which the device runs as its own loop
// event, never inside the call that passed it. Every queue is bounded by
// the Config, and invariants are asserted with panics.
package journal
