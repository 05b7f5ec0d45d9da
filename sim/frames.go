package sim

import (
	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// PeerFrame is one frame delivered from a replica to a peer, as
// Outputs.Frames sees it: when it was delivered and, when known, when its
// sender handed it to the network (the difference is its time in flight,
// which a timeline draws as the slope of the message's arrow).
type PeerFrame struct {
	AtNs int64 // delivered, virtual ns
	// SentNs is when the sender handed the frame to the network, or -1
	// when that is not known: the frame's header was corrupted in flight
	// (its checksum no longer names the frame sent), or the stale-answer
	// nemesis held it and sent it out of turn.
	SentNs   int64
	From, To uint8
	// Frame is the frame as delivered, corruption included. It is valid
	// only during the call: the network reuses its buffer.
	Frame []byte
}

// sentQueueMax bounds the send times remembered for one connection
// direction: a direction whose frames stall behind a cut until the
// connection resets never delivers them, and its queue would otherwise
// grow for the rest of the run. 4,096 frames is far more than the network
// keeps in flight on one direction (network.Options.InFlightFramesMax).
const sentQueueMax = 4096

// sentConnsMax bounds the connection directions remembered. Connection
// ids are never reused, so the queues of dead connections are dropped,
// all at once, when there are more than this many.
const sentConnsMax = 1024

// frameTap is Outputs.Frames at work: it notes when each frame was sent, by
// connection direction, and hands every delivered frame to the output with
// its send time. It draws nothing and schedules nothing, so a run with it
// has the digest of a run without.
//
// A connection direction delivers its frames in order, once each, or loses
// them all when it resets (package network): so the frame delivered is the
// oldest one sent on its direction whose header checksum matches, and any
// older ones noted before it were lost. A corrupted header matches none; it
// leaves the queue alone and goes out with SentNs -1.
type frameTap struct {
	out   func(PeerFrame)
	sends map[sentKey]*sentQueue // looked up only, and emptied whole (forget)
}

// sentKey is one direction of one connection.
type sentKey struct {
	conn network.ConnID
	from uint8
}

// sentQueue is the frames sent on one direction and not yet delivered,
// oldest first.
type sentQueue struct {
	sums []wire.U128
	at   []int64
}

func newFrameTap(out func(PeerFrame)) *frameTap {
	return &frameTap{out: out, sends: map[sentKey]*sentQueue{}}
}

// sent notes a frame from replica from handed to the network on c at atNs.
func (t *frameTap) sent(atNs int64, from uint8, c network.ConnID, frame []byte) {
	k := sentKey{c, from}
	q := t.sends[k]
	if q == nil {
		if len(t.sends) >= sentConnsMax {
			t.forget()
		}
		q = &sentQueue{}
		t.sends[k] = q
	}
	if len(q.sums) >= sentQueueMax {
		q.sums, q.at = q.sums[1:], q.at[1:]
	}
	q.sums = append(q.sums, wire.HeaderOf(frame).Checksum())
	q.at = append(q.at, atNs)
}

// forget drops every queue. Most belong to connections that are gone;
// a live one's frames in flight then go out with SentNs -1, which is
// rare (sentConnsMax directions) and only costs an arrow's slope.
func (t *frameTap) forget() {
	clear(t.sends)
}

// delivered hands a frame delivered on c, from replica from to replica to,
// to the output.
func (t *frameTap) delivered(atNs int64, c network.ConnID, from, to uint8, frame []byte) {
	f := PeerFrame{AtNs: atNs, SentNs: -1, From: from, To: to, Frame: frame}
	if q := t.sends[sentKey{c, from}]; q != nil {
		sum := wire.HeaderOf(frame).Checksum()
		for i, s := range q.sums {
			if s == sum {
				f.SentNs = q.at[i]
				q.sums, q.at = q.sums[i+1:], q.at[i+1:]
				break
			}
		}
	}
	t.out(f)
}
