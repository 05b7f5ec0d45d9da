// Package vsr is the consensus core of one replica for one consensus group:
// Viewstamped Replication as Iggy's replica plane runs it (cluster.mdx,
// consensus.md), written as a pure state machine in the manner of etcd-io/raft.
// Frames, ticks and storage completions go in; frames, journal writes and
// events come out, through small interfaces the caller implements (Outbox,
// Journal, StateMachine, Sink). A Group never starts a goroutine, never reads a
// clock it was not handed, and draws randomness only from the generator it was
// given.
//
// The core is plane-generic: the metadata plane runs it over a durable journal
// and the metadata state machine; a partition plane runs it over an in-memory
// journal (MemJournal) and its partition state. Nothing here knows about
// sessions, bodies or clients beyond the opaque fields a prepare carries.
//
// Safety rules this package keeps, beyond the textbook (consensus.md, "traps"):
//   - nothing that implies a (view, log_view) leaves the replica before that
//     pair is durable: SVC, DVC, StartView, Prepare, PrepareOk and Commit alike;
//   - a replica acknowledges op N only when it holds every op in (commit_min, N]
//     with the view's identities, so its reported op never drops below an op it
//     acknowledged;
//   - before applying op N it checks N's identity against the canonical headers
//     of the current view (from its own prepares, a StartView, a view-change
//     merge, or the hash chain down from one of those);
//   - a replica nacks in a DoViewChange only an op it can prove it never
//     acknowledged; a slot it cannot read is reported blank without a nack.
package vsr
