// Package diskread reads a replica's durable disk image by the format of
// docs/disk-format.md, independently of the journal that wrote it.
//
// The checker's durability checks ask of each replica's disk whether it
// durably holds an acknowledged prepare, and which view and log_view a
// restart would open with. Answering through the replica's own journal code
// (replica/journal) would make a bug in its reading rules invisible to the
// checks that exist to catch it, so this package implements those rules a
// second time, from the document alone: it imports replica/wire (the frame
// and superblock record layouts and their checksums, which are the wire
// format) and XXH3, and nothing of the journal. Its tests cross-check it
// against replica/journal on simulated devices; a disagreement is a bug in
// one of the two, or in the document.
//
// Everything reads through a Peek, a function that fills a buffer with the
// bytes a crash now would leave (storage.SimDevice.PeekDurable): no I/O, no
// faults, no state. Sections cited as "format N" are those of
// docs/disk-format.md.
//
// What reads what:
//
//   - HoldsAcknowledged, HoldsPrepare, DurablePrepare and ReadSlot read one
//     journal slot alone (format 5 to 7, 9), as journal.Inspector.Slot does;
//   - DurableView and ReadSuperblock read the four superblock copies and
//     choose one (format 10);
//   - Recover reads the whole journal as a restart does (format 12), and
//     says what it would know of every op (format 8);
//   - ReadCheckpointArea and FindCheckpoint read the metadata plane's
//     checkpoint areas (format 14.4), ReadOffsetRecords the consumer offset
//     records (format 14.2) and ReadSegmentLog a slot's segment log (format
//     14.3): the durable artifacts besides the journal, which the checker
//     holds to the replica's promises (checker/artifacts.go).
//
// The superblock record and its VsrState are read by this package's own
// code too (vsrstate.go), not replica/wire's decoders; message batches
// inside segment units are wire.md 7's and are read with replica/wire.
package diskread
