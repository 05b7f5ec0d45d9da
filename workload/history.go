package workload

import "github.com/iggy-vopr/vopr/replica/wire"

// Invocation is one request as a client first sends it (retries of the
// same request are not new invocations).
type Invocation struct {
	Client    int       // the client's index in the workload
	ClientID  wire.U128 // the client id it sends under
	Session   uint64    // 0 for a Register
	Request   uint64    // 0 for a Register
	Operation wire.Operation
	Code      uint32 // NonReplicated: the read's command code
	Body      []byte
	Checksum  wire.U128 // request_checksum
	// OffFormat: the client sent a request_checksum other than its body's
	// on purpose (a bad request; the raw path does not check it,
	// client-ops.md 2.4).
	OffFormat bool
	AtNs      int64
}

// CompletionKind says how a request ended.
type CompletionKind uint8

const (
	// Replied: a Reply with status 0 (a committed reply, or a replay of it).
	Replied CompletionKind = iota + 1
	// Denied: a status Reply, refused before consensus (not committed).
	Denied
	// Indefinite: the session was evicted while the request was in flight,
	// or a request owed no answer (Op.Silent) was given up: it may or may
	// not have committed, and will never be resent.
	Indefinite
)

func (k CompletionKind) String() string {
	switch k {
	case Replied:
		return "replied"
	case Denied:
		return "denied"
	case Indefinite:
		return "indefinite"
	}
	return "completion(?)"
}

// Completion is how one invocation ended.
type Completion struct {
	Client   int
	ClientID wire.U128
	Request  uint64
	Kind     CompletionKind
	Frame    []byte // Replied, Denied: the whole Reply frame
	Reason   wire.EvictionReason
	Attempts int // how many times the request was sent
	AtNs     int64
}

// Recorder receives the history, in the order things happen.
type Recorder interface {
	Invoke(inv Invocation)
	Complete(c Completion)
}

// Timeout is one request that waited TimeoutTicks without an answer: the
// client leaves its connection and sends the same request to Target next.
type Timeout struct {
	Client   int
	ClientID wire.U128
	Request  uint64 // 0 for a Register
	Target   int    // the replica it tries next
	Attempts int    // sends so far
	AtNs     int64
}

// TimeoutRecorder is a Recorder that also hears of every timeout (the
// trace does; the checker needs only invocations and completions).
type TimeoutRecorder interface {
	Recorder
	TimedOut(t Timeout)
}
