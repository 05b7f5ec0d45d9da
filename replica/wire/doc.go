// Package wire converts between bytes and typed frames of Apache Iggy's replica
// plane: the 256-byte header of every command, the frame seal, the prepare
// identity and the body seals, the message batch, the state-transfer artifacts
// (ISM1 manifest, ICT2 client table, ICO1 consumer offsets), the superblock
// record, the view-change suffix and the handshake MAC.
//
// Everything here is a pure function of its arguments: no state, no I/O, no
// randomness. The layouts and rules follow ../shared/spec/wire.md (section
// numbers in comments refer to it); where that document records a correction
// (its section 0), the correction is what is implemented.
//
// Every integer on the wire is little-endian. A u128 is carried as [U128],
// two u64 halves, low first, exactly as it sits in the frame.
//
// Decoding is split in two steps so that the receive path never allocates:
// [Validate] applies the receive-side rules of wire.md 4.1 and 5 to a raw
// header and body and returns a [*FrameError] naming the rule that failed;
// the typed header structs (PrepareHeader, CommitHeader, ...) then read their
// fields with Decode. Encoding is the reverse: fill a typed header, Encode it
// into a [Header], and Seal it with the regime its command uses (see
// [Header.SealFrame], [Header.SealPrepare] and [BuildFrame]).
package wire
