package replica

import (
	"math/rand/v2"

	"github.com/iggy-vopr/vopr/replica/bus"
	"github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/storage"
)

// ConnID names a client connection on the client port.
type ConnID uint64

// ClientTransport carries frames back to clients on the connection their
// request arrived on.
type ClientTransport interface {
	Send(c ConnID, frame []byte) bool
	Close(c ConnID)
}

// Sink receives the replica's events: its consensus group's (vsr.Event)
// and the client port's.
type Sink interface {
	Event(e Event)
}

// EventKind says what an Event reports.
type EventKind uint8

const (
	// EventGroup wraps an event of a consensus group.
	EventGroup EventKind = iota + 1
	// EventReply: a committed op's reply was built (on every replica, at
	// commit); Frame is the Reply frame, Sent whether this replica sent it.
	EventReply
	// EventReplay: a cached reply was resent to a retrying client.
	EventReplay
	// EventEviction: an Eviction was sent to Client.
	EventEviction
	// EventDeny: a request was refused before consensus with Status.
	EventDeny
	// EventProbe: a rare path of the replica (outside its groups).
	EventProbe
	// EventPartitionBuilt: the replica built the consensus group of a
	// partition (PartitionGroup), as the committed metadata gained it.
	EventPartitionBuilt
	// EventPoll: the replica answered a PollMessages of Client's Request
	// from the partition group PartitionGroup.
	EventPoll
	// EventCheckpoint: the superblock now records the checkpoint of the
	// metadata plane at Op, whose snapshot payload (wire.md 8.2) is Frame.
	EventCheckpoint
	// EventRestored: the replica opened with its state restored from the
	// checkpoint at Op (payload Frame); it applies only the ops above it.
	EventRestored
	// EventInstalled: the replica installed the state at Op that a state
	// transfer brought (snapshot payload Frame): it applies Op+1 next.
	EventInstalled
	// EventPartitionInstalled: the replica installed the state of partition
	// group PartitionGroup at Op that a partition state transfer brought:
	// Frame is its segment log (the committed batches from offset 0,
	// wire.md 8.4) and Offsets its consumer offsets (ICO1, wire.md 8.5); it
	// applies Op+1 next.
	EventPartitionInstalled
	// EventOffsetsRecovered: a partition group was built on slot Disk.Slot
	// and recovered its consumers' offsets from their records
	// (partition.OffsetStore.Recover): Disk.Offsets, Disk.Torn and
	// Disk.Corrupt. For the checker's reading of the same records.
	EventOffsetsRecovered
	// EventOffsetWrite: a partition group asked its offset records to make
	// Disk.Consumer's offset (or its deletion) durable; Disk.Recorded is
	// false when the records were full and the offset stays in memory.
	EventOffsetWrite
	// EventOffsetDurable: the records report that write durable (its done
	// ran: the record holds it, or a newer write of the consumer).
	EventOffsetDurable
	// EventSegmentRecovered: a partition group was built on slot Disk.Slot
	// and read back its segment log (partition.SegmentLog.Recover):
	// Disk.Segment.
	EventSegmentRecovered
	// EventCheckpointRead: a restart read back the checkpoint at Op
	// (payload Frame) from its area, the header naming Disk.Identity and
	// Disk.Timestamp, before it restores it (EventRestored follows).
	EventCheckpointRead
	// EventJournalRecovered: a restart's journal recovery is done (its
	// repairs written): Journal says what it concluded, for a checker
	// that recovers the same disk by its own reading of the format.
	EventJournalRecovered
	// EventOfferRefused: a state-transfer session refused its server's
	// StateTransferTarget (Frame; Probe the session's reason), which offers
	// the state of a group above Op (the session's need: what the replica
	// has applied) with artifacts of at most ArtifactMax bytes each: for a
	// checker that judges by its own reading of the offer whether it was
	// one the replica could take.
	EventOfferRefused
)

// JournalReport is what a restart's journal recovery concluded
// (docs/disk-format.md 8 and 12), reported with EventJournalRecovered.
type JournalReport struct {
	// HeadOp is the highest op any copy of a formatted slot shows, raised
	// to the superblock's log head (format 12, step 5).
	HeadOp uint64
	// Head is the head the replica's log starts from: HeadOp, extended
	// through the ops right above it whose slots say nothing of them
	// (journal.Recovery.AckHead); 0 for a fresh replica, HeadOp for a
	// single one.
	Head uint64
	// FirstOp is the op Knowledge[0] is of: the first of the ring's
	// window (HeadOp-N, HeadOp+N), at least 1 (N: the ring's slots).
	FirstOp uint64
	// Knowledge is what the recovered journal knows of each op from
	// FirstOp on, by format 8's names (journal.Knowledge.String).
	Knowledge []string
}

// DiskReport is what the durable artifact events (EventOffsetsRecovered,
// EventOffsetWrite, EventOffsetDurable, EventSegmentRecovered,
// EventCheckpointRead) report, for a checker that reads the same records
// from the device by its own reading of their format.
type DiskReport struct {
	Slot int // the partition superblock slot the group runs in
	// One consumer's offset write.
	Consumer uint32
	Offset   uint64
	Deleted  bool
	Recorded bool
	// What a group's build recovered: the offsets (ascending consumer),
	// the records found torn and corrupt.
	Offsets       []wire.OffsetEntry
	Torn, Corrupt int
	// What the segment log's open found in the slot for the group.
	Segment partition.SegmentRecovery
	// The checkpoint a restart read: its header's prepare identity and
	// timestamp.
	Identity  wire.U128
	Timestamp uint64
	// ClientTable: with EventCheckpoint, EventRestored and EventInstalled,
	// the client table as ICT2 (wire.md 8.3) that the replica offers with
	// that checkpoint in a state transfer.
	ClientTable []byte
}

// Event is one thing a replica reports.
type Event struct {
	Kind    EventKind
	Replica uint8
	Group   vsr.Event // EventGroup
	Client  wire.U128
	Request uint64
	Op      uint64
	Frame   []byte // EventReply, EventReplay: the Reply frame
	Sent    bool
	Reason  wire.EvictionReason
	Status  uint32
	Probe   string
	// PartitionGroup: EventPartitionBuilt's and EventPartitionInstalled's
	// group id.
	PartitionGroup uint64
	// Offsets: EventPartitionInstalled's ICO1 artifact.
	Offsets []byte
	// Disk: the durable artifact events' report.
	Disk DiskReport
	// Journal: EventJournalRecovered's report.
	Journal JournalReport
	// ArtifactMax: EventOfferRefused's bound on one artifact.
	ArtifactMax uint64
}

// Env is everything a replica needs from the world.
type Env struct {
	Peers   bus.Transport
	Clients ClientTransport
	Device  storage.Device
	Sink    Sink
	// Rand is the replica's own seeded stream: timeout jitter, nonces.
	Rand *rand.Rand
	// RealtimeUs reads the replica's realtime clock (µs since the epoch).
	RealtimeUs func() uint64
}
