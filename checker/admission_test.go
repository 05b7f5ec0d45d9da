package checker_test

import (
	"encoding/binary"
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// arrive tells the checker replica r reads r's request now.
func (f *fakeCluster) arrive(r uint8, q *req) {
	h := wire.RequestHeader{Client: q.inv.ClientID, Session: q.inv.Session, Request: q.inv.Request,
		Operation: q.inv.Operation, RequestChecksum: q.inv.Checksum}
	f.c.ClientRequestArrived(f.tick(), r, wire.BuildFrame(&h, q.inv.Body))
}

// A metadata request the model refuses before consensus is never
// prepared: a DeleteStream whose numeric identifier is 3 bytes long (a
// Preflight that forgot to decode DeleteStream bodies).
func TestRefusedRequestPrepared(t *testing.T) {
	for _, bad := range []bool{false, true} {
		f, cls := started(t, 3, 1)
		body := metadata.DeleteStream{Stream: metadata.ID(1)}.Encode()
		if bad {
			body = []byte{1, 3, 1, 0, 0}
		}
		f.do(f.invoke(cls[0], createStream("a")))
		q := f.invoke(cls[0], call{wire.OperationDeleteStream, body})
		f.propose(q)
		if bad {
			wantViolation(t, f, checker.RefusedPrepared)
			continue
		}
		wantPass(t, f)
	}
}

// A status a replica denies a metadata request with is the model's: a
// CreateTopic of 1001 partitions is TooManyPartitions, not InvalidCommand;
// a transient is always allowed.
func TestDenyDiffersFromTheModel(t *testing.T) {
	for _, status := range []uint32{2015, 58, 3} {
		f, cls := started(t, 3, 1)
		q := f.invoke(cls[0], createTopic("s", "t", 1001))
		f.c.Replica(f.tick(), replica.Event{Kind: replica.EventDeny, Replica: 0, Client: q.inv.ClientID, Request: q.inv.Request, Status: status})
		if status == 3 {
			wantViolation(t, f, checker.AnswerDiverged)
			continue
		}
		wantPass(t, f)
	}
}

// An eviction for a request's body is the model's: a CreateTopic whose
// message_expiry text humantime does not read is evicted InvalidRequestBody;
// one it reads is replicated.
func TestEvictionDiffersFromTheModel(t *testing.T) {
	block := func(expiry string) []byte {
		return wire.EncodeOptions([]wire.Option{{Key: "message_expiry", Kind: wire.OptionString, Value: []byte(expiry)}})
	}
	for _, expiry := range []string{"1x", "1h 30m"} {
		f, cls := started(t, 3, 1)
		body := metadata.CreateTopic{Stream: metadata.Named("s"), PartitionsCount: 1, Name: "t", Options: block(expiry)}.Encode()
		q := f.invoke(cls[0], call{wire.OperationCreateTopic, body})
		f.arrive(0, q)
		f.c.Replica(f.tick(), replica.Event{Kind: replica.EventEviction, Replica: 0, Client: q.inv.ClientID, Reason: wire.EvictionInvalidRequestBody})
		f.c.ClientRequestHandled(0)
		if expiry == "1h 30m" {
			wantViolation(t, f, checker.AnswerDiverged)
			continue
		}
		wantPass(t, f)
	}
}

// sendTo is a SendMessages of one message to stream s, topic t,
// partition p.
func sendTo(s, t string, p uint32) []byte {
	batch := wire.EncodeBatch(wire.BatchHeader{OriginTimestamp: 1}, []wire.Message{{ID: wire.U128{Lo: 7}, Payload: []byte("x")}})
	return partition.EncodeSendMessages(partition.SendMessages{Stream: metadata.Named(s), Topic: metadata.Named(t),
		Partitioning: partition.Partitioning{Kind: partition.PartitionID, Partition: p}, Batch: batch})
}

// A replica drops as undecodable only a SendMessages the model does not
// decode (a decoder that misreads the prefix drops every send: named at
// the first).
func TestSendDroppedAsUndecodable(t *testing.T) {
	for _, bad := range []bool{false, true} {
		f, cls := started(t, 3, 1)
		body := sendTo("s", "t", 0)
		if !bad {
			body[0]++ // metadata_length one too many: the model does not decode it either
		}
		q := f.invoke(cls[0], call{wire.OperationSendMessages, body})
		f.arrive(1, q)
		f.c.Replica(f.tick(), replica.Event{Kind: replica.EventProbe, Replica: 1, Probe: "partition plane: SendMessages dropped at admission: invalid partitioning"})
		f.c.ClientRequestHandled(1)
		if bad {
			wantViolation(t, f, checker.AnswerDiverged)
			continue
		}
		wantPass(t, f)
	}
}

// ResourceNotFound for a consumer offset request names a partition the
// replica's applied metadata does not hold: partition 1 of a topic of two
// is there; partition 5 is not; a body the model does not decode (ack
// level 2) is ResourceNotFound whatever the state, and is never prepared.
func TestOffsetDenied(t *testing.T) {
	offset := func(p uint32, ack uint8) call {
		return call{wire.OperationStoreConsumerOffset, partition.EncodeOffsetRequest(partition.OffsetRequest{ConsumerKind: 1,
			Consumer: metadata.ID(3), Stream: metadata.Named("s"), Topic: metadata.Named("t"), HasPartition: true, Partition: p, Offset: 0, Ack: ack}, true)}
	}
	for _, tc := range []struct {
		c    call
		bad  bool
		what string
	}{{offset(1, 1), true, "resolves"}, {offset(5, 1), false, "no such partition"}, {offset(1, 2), false, "ack 2"}} {
		f, cls := started(t, 3, 1)
		f.do(f.invoke(cls[0], createStream("s")))
		f.do(f.invoke(cls[0], createTopic("s", "t", 2)))
		q := f.invoke(cls[0], tc.c)
		f.c.Replica(f.tick(), replica.Event{Kind: replica.EventDeny, Replica: 2, Client: q.inv.ClientID, Request: q.inv.Request, Status: 20})
		if tc.bad {
			wantViolation(t, f, checker.AnswerDiverged)
			continue
		}
		wantPass(t, f)
	}
}

// topicGroups returns the consensus groups of a committed CreateTopic's
// partitions, in partition order.
func topicGroups(t *testing.T, q *req) []uint64 {
	x, err := metadata.DecodeCreateTopicWithAssignments(q.p.body)
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for _, a := range x.Partitions {
		out = append(out, a.ConsensusGroupID)
	}
	return out
}

// A partition primary prepares a send it admits in the group of the
// partition the model routes it to (a resolve that picks the first other
// partition sends partition 1's messages to partition 0).
func TestSendMisrouted(t *testing.T) {
	for _, bad := range []bool{false, true} {
		f, cls := started(t, 3, 1)
		f.do(f.invoke(cls[0], createStream("s")))
		groups := topicGroups(t, f.do(f.invoke(cls[0], createTopic("s", "t", 2))))
		q := f.invoke(cls[0], call{wire.OperationSendMessages, sendTo("s", "t", 1)})
		group := groups[1]
		if bad {
			group = groups[0]
		}
		x := wire.PrepareHeader{Prefix: wire.Prefix{Command: wire.CommandPrepare}, Client: q.inv.ClientID, Request: q.inv.Request,
			Operation: wire.OperationSendMessages, Op: 1, Group: group}
		f.arrive(0, q)
		f.c.Replica(f.tick(), replica.Event{Kind: replica.EventGroup, Replica: 0, Group: vsr.Event{Kind: vsr.EventPrepared, Group: group,
			Replica: 0, Op: 1, Header: *wire.HeaderOf(wire.BuildFrame(&x, nil))}})
		f.c.ClientRequestHandled(0)
		if bad {
			wantViolation(t, f, checker.Misrouted)
			continue
		}
		wantPass(t, f)
	}
}

// pollOf is a PollMessages of partition p of stream s, topic t.
func pollOf(s, t string, p uint32) call {
	return call{wire.OperationNonReplicated, partition.EncodePoll(partition.Poll{ConsumerKind: 1, Consumer: metadata.ID(1),
		Stream: metadata.Named(s), Topic: metadata.Named(t), HasPartition: true, Partition: p, Strategy: partition.PollFirst, Count: 1})}
}

// A poll's NotFound status names what the replica's applied metadata does
// not hold.
func TestPollAnswers(t *testing.T) {
	for _, tc := range []struct {
		c      call
		status uint32
		bad    bool
	}{
		{pollOf("s", "t", 5), 3007, false}, {pollOf("s", "t", 1), 3007, true},
		{pollOf("x", "t", 0), 1009, false}, {pollOf("s", "t", 0), 1009, true},
		{pollOf("s", "u", 0), 2010, false}, {pollOf("x", "u", 0), 2010, true},
	} {
		f, cls := started(t, 3, 1)
		f.do(f.invoke(cls[0], createStream("s")))
		f.do(f.invoke(cls[0], createTopic("s", "t", 2)))
		q := f.invoke(cls[0], tc.c)
		q.inv.Code = 100
		f.c.Invoke(q.inv) // with its command code, as a client invokes a read
		f.c.Replica(f.tick(), replica.Event{Kind: replica.EventDeny, Replica: 1, Client: q.inv.ClientID, Request: q.inv.Request, Status: tc.status})
		if tc.bad {
			wantViolation(t, f, checker.AnswerDiverged)
			continue
		}
		wantPass(t, f)
	}
}

// A poll's reply names the partition polled, one the replica's applied
// metadata holds; the empty poll answers only a body the model does not
// decode (a decoder that refuses valid polls answers them all so).
func TestPollReplies(t *testing.T) {
	empty := make([]byte, 16)
	ofPartition := func(p uint32) []byte { return binary.LittleEndian.AppendUint32(make([]byte, 0, 16), p)[:4:4] }
	undecodable := call{wire.OperationNonReplicated, append(pollOf("s", "t", 1).body, 9)}
	for _, tc := range []struct {
		c    call
		body []byte
		bad  bool
	}{
		{pollOf("s", "t", 1), append(ofPartition(1), make([]byte, 12)...), false},
		{pollOf("s", "t", 1), empty, true},
		{pollOf("x", "t", 0), empty, true},
		{undecodable, empty, false},
		{undecodable, append(ofPartition(1), make([]byte, 12)...), true},
	} {
		f, cls := started(t, 3, 1)
		f.do(f.invoke(cls[0], createStream("s")))
		f.do(f.invoke(cls[0], createTopic("s", "t", 2)))
		q := f.invoke(cls[0], tc.c)
		h := wire.RequestHeader{Client: q.inv.ClientID, Session: q.inv.Session, Request: q.inv.Request,
			Operation: wire.OperationNonReplicated, CommandCode: 100}
		f.c.ClientRequestArrived(f.tick(), 2, wire.BuildFrame(&h, q.inv.Body))
		r := wire.ReplyHeader{Client: q.inv.ClientID, Request: q.inv.Request, Operation: wire.OperationNonReplicated}
		f.c.ToClient(f.tick(), 2, wire.BuildFrame(&r, tc.body))
		f.c.ClientRequestHandled(2)
		if tc.bad {
			wantViolation(t, f, checker.AnswerDiverged)
			continue
		}
		wantPass(t, f)
	}
}
