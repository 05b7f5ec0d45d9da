package storage

import "errors"

// Device is a block device of Sectors() sectors of SectorSize() bytes each,
// with asynchronous I/O: Read, Write and Sync return at once, and their done
// callback runs later, on the caller's goroutine, as its own step of the
// caller's event loop. done never runs from inside the call that issued the
// I/O, so a caller may issue I/O while holding state it is in the middle of
// updating.
//
// The contract below is all a replica may rely on; the simulated device
// exercises every freedom it leaves (SimDevice).
//
// Arguments. An I/O addresses len(buf)/SectorSize() consecutive sectors from
// sector; the length must be a nonzero multiple of SectorSize() and the range
// must lie inside the device. done must not be nil. A violation is a
// programmer error and panics: it is never reported through done. An
// implementation may bound the number of I/Os in flight at once and panic
// beyond the bound (an unbounded queue hides a missing bound in the caller);
// the replica keeps its own bound below it.
//
// Ordering. I/Os complete in any order, whatever order they were issued in.
// Two writes to overlapping sectors that are in flight at once take effect in
// the order they complete, which the caller does not know: a replica that
// cares which one wins must not overlap them.
//
// Write. data is copied at the call; the caller may reuse it at once. When
// done(nil) runs the write has completed: its bytes are visible to every read
// that completes afterwards, but they are not durable until a Sync issued
// after this completion has itself completed.
//
// Read. buf belongs to the device until done runs and is filled before it
// runs. On done(nil), buf holds, for each sector, the bytes of the last write
// to that sector that completed before the read completed. A write still in
// flight when the read was issued may therefore be seen or not, depending on
// which completes first; a replica must not read sectors it is writing.
// A successful read may still return wrong bytes (silent corruption, a torn
// sector after a crash, a write that was misdirected elsewhere, or a sector
// never written, which holds arbitrary bytes, not zeros): the replica
// checksums everything it reads. done(ErrReadFault) means some sector in the
// range is unreadable (a latent sector error); buf's contents are then
// unspecified, and retrying fails the same way until the sector is rewritten.
//
// Sync. When done(nil) runs, every write that had completed when Sync was
// called is durable: it survives any later crash. Writes in flight at the
// call are not covered, even if they complete before the sync does, nor are
// writes issued after it. Several syncs may be in flight at once.
//
// Errors. Write and Sync report nil on the simulated device. A real device
// may fail them; after a failed Sync the state of the covered writes is
// unknown (Linux may drop the dirty pages), so the replica treats either
// error as fatal and restarts from what is durable rather than retrying.
//
// Batches. ReadBatch and WriteBatch submit many I/Os at once, as a recovery
// scan or a format does with io_uring or preadv: each extent is one I/O
// under every rule above (its own sectors, its own faults, its own error),
// but the batch completes as a whole: done runs once, after every extent has
// completed. Extents of one batch may lie anywhere on the device; the
// extents of a write batch must not overlap one another (which of two would
// win is not promised). A batch counts as one I/O against any bound on I/Os
// in flight.
//
// Crash. When the process crashes, no done of an I/O issued before the crash
// ever runs. Afterwards each sector that had a write not yet durable (one
// completed but not synced, or one in flight) holds its last durable bytes,
// the bytes of one of those writes, or a torn mix of the two (some parts old,
// some new); every other sector holds exactly its durable bytes.
type Device interface {
	// SectorSize returns the size of a sector in bytes: the unit of every
	// I/O's offset and length.
	SectorSize() int
	// Sectors returns the number of sectors on the device.
	Sectors() uint64
	// Read fills buf from the len(buf)/SectorSize() sectors starting at
	// sector, then runs done.
	Read(sector uint64, buf []byte, done func(error))
	// Write writes data to the len(data)/SectorSize() sectors starting at
	// sector, then runs done.
	Write(sector uint64, data []byte, done func(error))
	// Sync makes durable the writes completed before the call, then runs
	// done.
	Sync(done func(error))
	// ReadBatch reads every extent, then runs done once; each extent's Err
	// is nil or ErrReadFault for that extent alone. The extents (and their
	// buffers) belong to the device until done runs.
	ReadBatch(extents []Extent, done func())
	// WriteBatch writes every extent (data copied at the call), then runs
	// done once.
	WriteBatch(extents []Extent, done func(error))
}

// Extent is one I/O of a batch: len(Buf)/SectorSize() consecutive sectors
// from Sector. A read batch fills Buf and sets Err.
type Extent struct {
	Sector uint64
	Buf    []byte
	Err    error
}

// ErrReadFault is the error a read completes with when a sector in its range
// is unreadable: a latent sector error, which persists across retries until
// the sector is rewritten. The replica repairs the data from another replica
// and rewrites it.
var ErrReadFault = errors.New("storage: read fault (latent sector error)")
