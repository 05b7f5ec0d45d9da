package checker

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/iggy-vopr/vopr/checker/refmodel"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// How a replica answers a request before consensus, held to the model
// (client-ops.md 2.1, 2.4, 5.25-5.27, refmodel.Admit): committed replies
// are compared with the model's where they are built (replies.go); these
// are the answers nothing commits. A metadata request the model refuses is
// never prepared; a status a replica denies with is the model's (or a
// transient one); an eviction for the request's operation or body is the
// model's; a partition-plane request the model decodes is never dropped as
// undecodable, one it does not decode is never prepared, answered with a
// code of a decoded one, or answered at all when it is a send; and a
// ResourceNotFound names a partition the replica's own applied metadata
// does not hold. Each is judged at the replica's event, before any client
// reads the answer.

// Names of the violations of what a replica answers before consensus.
const (
	// RefusedPrepared: a replica prepared a request the model refuses
	// before consensus (a body that does not decode, an operation a client
	// may not send, options the projection refuses).
	RefusedPrepared = "refused request prepared"
	// AnswerDiverged: a replica denied, evicted or silently dropped a
	// request other than the model answers it.
	AnswerDiverged = "answer differs from the model"
	// Misrouted: a partition primary prepared a request it admitted in the
	// consensus group of a partition other than the one the model routes it
	// to (client-ops.md 1.5).
	Misrouted = "request routed to another partition"
	// ProjectionDiverged: a replica sent a prepare of a client's request
	// whose body is not what a correct primary builds from it
	// (refmodel.Project: the request verbatim, or CreateTopic and
	// CreatePartitions projected).
	ProjectionDiverged = "projection differs from the model"
)

// Status codes of the answers before consensus (client-ops.md 2.7).
const (
	statusOK                     = 0 // a forwarded Logout of a gone session: the empty success
	statusResourceNotFound       = 20
	statusTransientNotCommitted  = 57
	statusTransientNotAccepted   = 58
	statusConsumerOffsetNotFound = 3021
	statusInvalidOffset          = 4100
	statusUnauthenticated        = 40
	statusStreamIDNotFound       = 1009
	statusTopicIDNotFound        = 2010
	statusPartitionNotFound      = 3007
)

// probeSendDropped is the probe a replica emits when its partition plane
// drops a SendMessages whose body does not decode (replica/partitions.go:
// the only trace a silent drop leaves).
const probeSendDropped = "partition plane: SendMessages dropped at admission: "

// admission is what these checks keep: the request a replica is reading,
// and the model's state after each op that changed it.
type admission struct {
	// arriving: the client request replica arrivingReplica is reading now
	// (ClientRequestArrived .. ClientRequestHandled); its events are its
	// answer.
	arriving        *wire.RequestHeader
	arrivingReplica uint8
	arrivingBody    []byte // the request's body, copied
	// states: the model after every committed op that changed it, in op
	// order (a replica that applied op k resolves names as states' last
	// entry at or below k does).
	states []modelAt
}

type modelAt struct {
	op    uint64
	model *refmodel.Model
}

func (c *Checker) admissionState() *admission {
	if c.adm == nil {
		c.adm = &admission{}
	}
	return c.adm
}

// ClientRequestArrived tells the checker replica r is about to read a frame
// a client sent; ClientRequestHandled follows once it has. The events in
// between are the replica's answer to that request.
func (c *Checker) ClientRequestArrived(nowNs int64, r uint8, frame []byte) {
	c.nowNs = nowNs
	a := c.admissionState()
	a.arriving = nil
	if wire.Validate(frame) != nil || wire.HeaderOf(frame).Command() != wire.CommandRequest {
		return // dropped unread (a frame the network damaged)
	}
	var h wire.RequestHeader
	h.Decode(wire.HeaderOf(frame))
	a.arriving, a.arrivingReplica, a.arrivingBody = &h, r, append(a.arrivingBody[:0], frame[wire.HeaderSize:]...)
}

// admissionSent judges a frame replica r sends a client while it reads a
// client's request: a poll's reply (5.28) is the empty poll for a body the
// model does not decode or a consumer group's, and otherwise names the
// partition polled, which the replica's applied metadata holds (a poll of
// what it does not hold is a NotFound status).
func (c *Checker) admissionSent(r uint8, frame []byte) {
	a := c.adm
	if a == nil || a.arriving == nil || a.arrivingReplica != r || len(frame) < wire.HeaderSize {
		return
	}
	h := a.arriving
	if h.Operation != wire.OperationNonReplicated || h.CommandCode != pollMessagesCode || wire.HeaderOf(frame).Command() != wire.CommandReply {
		return
	}
	var x wire.ReplyHeader
	x.Decode(wire.HeaderOf(frame))
	if x.Client != h.Client || x.Request != h.Request || x.Status != 0 {
		return
	}
	body := frame[wire.HeaderSize:]
	var why string
	q, err := refmodel.DecodePoll(a.arrivingBody)
	switch {
	case err != nil || !q.Individual():
		if string(body) != string(emptyPoll[:]) {
			why = "the model answers it with the empty poll (it does not decode, or is a consumer group's)"
		}
	case len(body) < 4:
		why = "a poll reply shorter than its partition id"
	default:
		applied, m := c.appliedModel(r)
		switch got := binary.LittleEndian.Uint32(body); {
		case !m.Resolves(q.Target):
			why = fmt.Sprintf("%s does not resolve in the metadata the replica applied (op %d): the model answers a NotFound status", q.Target, applied)
		case !q.NamesPartition(got):
			why = fmt.Sprintf("the reply is of partition %d; the model polls %s", got, q.Target)
		}
	}
	if why != "" {
		c.fail(Violation{Name: AnswerDiverged, Replicas: []uint8{r},
			Detail: fmt.Sprintf("replica %d answered PollMessages request %d of client %s with a %d-byte reply; %s", r, h.Request, h.Client, len(body), why)})
	}
}

// emptyPoll is the reply to a poll that does not decode (client-ops.md
// 5.28): partition 0, current offset 0, no messages.
var emptyPoll [16]byte

// ClientRequestHandled: replica r has read the request ClientRequestArrived
// announced.
func (c *Checker) ClientRequestHandled(r uint8) {
	if c.adm != nil {
		c.adm.arriving = nil // a poll's answer: answers.go (ClientHandled)
	}
}

// admissionEvent sees every replica event first.
func (c *Checker) admissionEvent(e replica.Event) {
	switch e.Kind {
	case replica.EventDeny:
		c.deniedRequest(e)
	case replica.EventEviction:
		c.evictedRequest(e)
	case replica.EventProbe:
		c.probedRequest(e)
	case replica.EventGroup:
		if e.Group.Kind == vsr.EventPrepared {
			c.preparedRequest(e.Replica, e.Group)
		}
	}
}

// requestOf returns the invocation of a client's request, if a client
// invoked it.
func (c *Checker) requestOf(client wire.U128, request uint64) (*invocation, bool) {
	if request == 0 {
		return nil, false // a Register: checked by the client table model
	}
	inv, ok := c.invocations[requestKey{client, request}]
	return inv, ok
}

// isOffsetOperation: StoreConsumerOffset or DeleteConsumerOffset.
func isOffsetOperation(op wire.Operation) bool {
	return op == wire.OperationStoreConsumerOffset || op == wire.OperationDeleteConsumerOffset
}

// preparedRequest checks a prepare replica r built or took: a client
// request the model refuses before consensus is never replicated.
func (c *Checker) preparedRequest(r uint8, g vsr.Event) {
	var p wire.PrepareHeader
	p.Decode(&g.Header)
	inv, ok := c.requestOf(p.Client, p.Request)
	if !ok || !sameOperation(inv.inv.Operation, p.Operation) {
		return // not a client's request as sent: phantom commit's to judge
	}
	op, body := inv.inv.Operation, inv.inv.Body
	var why, routed string
	switch {
	case g.Group == wire.MetadataGroup:
		if refusal := refmodel.Admit(op, body); refusal.Kind != refmodel.Accepted {
			why = "the model's answer is " + refusal.String()
		}
	case op == wire.OperationSendMessages:
		t, err := refmodel.DecodeSendMessages(body)
		if err != nil {
			why = fmt.Sprintf("the model drops it unanswered (%v)", err)
		} else {
			routed = c.misrouted(r, p, g.Group, t)
		}
	case isOffsetOperation(op):
		q, err := refmodel.DecodeOffsetRequest(body, op == wire.OperationStoreConsumerOffset)
		switch {
		case err != nil:
			why = fmt.Sprintf("the model denies it ResourceNotFound (%v)", err)
		case q.Admissible() != nil:
			why = fmt.Sprintf("the model denies it ResourceNotFound (%v)", q.Admissible())
		case !q.Quorum:
			why = "its ack level is NoAck, applied by the partition primary alone and never replicated"
		default:
			routed = c.misrouted(r, p, g.Group, q.Target)
		}
	}
	if routed != "" {
		c.fail(Violation{Name: Misrouted, Replicas: []uint8{r}, Ops: []uint64{p.Op},
			Detail: fmt.Sprintf("replica %d prepared %v request %d of client %s as op %d of group %d, and %s",
				r, op, p.Request, p.Client, p.Op, g.Group, routed)})
		return
	}
	if why != "" {
		c.fail(Violation{Name: RefusedPrepared, Replicas: []uint8{r}, Ops: []uint64{p.Op},
			Detail: fmt.Sprintf("replica %d prepared op %d of group %d: %v request %d of client %s (%d-byte body), and %s",
				r, p.Op, g.Group, op, p.Request, p.Client, len(body), why)})
	}
}

// deniedRequest checks a status a replica answered a request with.
func (c *Checker) deniedRequest(e replica.Event) {
	switch e.Status {
	case statusOK, statusTransientNotCommitted, statusTransientNotAccepted:
		return // transients any request may get; a no-op Logout's success
	}
	inv, ok := c.requestOf(e.Client, e.Request)
	if !ok {
		return
	}
	op, body := inv.inv.Operation, inv.inv.Body
	var why string
	switch {
	case op == wire.OperationNonReplicated && inv.inv.Code == pollMessagesCode:
		why = c.pollDenied(e, body)
	case op == wire.OperationSendMessages:
		why = c.sendDenied(e, body)
	case isOffsetOperation(op):
		why = c.offsetDenied(e, op, body)
	default:
		if want := refmodel.Admit(op, body); want.Kind != refmodel.Deny || want.Status != e.Status {
			why = "the model's answer is " + want.String()
		}
	}
	if why != "" {
		c.fail(Violation{Name: AnswerDiverged, Replicas: []uint8{e.Replica},
			Detail: fmt.Sprintf("replica %d denied %v request %d of client %s with status %d; %s",
				e.Replica, op, e.Request, e.Client, e.Status, why)})
	}
}

// sendDenied judges a SendMessages denial: only ResourceNotFound, for a
// body that decodes and a target the replica's applied metadata does not
// resolve (5.25); an undecodable send is dropped unanswered.
func (c *Checker) sendDenied(e replica.Event, body []byte) string {
	t, err := refmodel.DecodeSendMessages(body)
	switch {
	case err != nil:
		return fmt.Sprintf("the model drops it unanswered (%v)", err)
	case e.Status != statusResourceNotFound:
		return fmt.Sprintf("a send that decodes is answered ResourceNotFound at most (%s)", t)
	}
	if applied, m := c.appliedModel(e.Replica); m.Resolves(t) {
		return fmt.Sprintf("%s resolves in the metadata the replica applied (op %d)", t, applied)
	}
	return ""
}

// offsetDenied judges a consumer offset request's denial (5.26, 5.27):
// ResourceNotFound for a body that does not decode, a consumer group, no
// partition, or a partition the replica's applied metadata does not hold;
// InvalidOffset (a store) and ConsumerOffsetNotFound (a delete) only for a
// body that decodes, as the partition's state decides.
func (c *Checker) offsetDenied(e replica.Event, op wire.Operation, body []byte) string {
	store := op == wire.OperationStoreConsumerOffset
	q, err := refmodel.DecodeOffsetRequest(body, store)
	if err == nil {
		err = q.Admissible()
	}
	switch {
	case err != nil && e.Status == statusResourceNotFound:
		return ""
	case err != nil:
		return fmt.Sprintf("the model denies it ResourceNotFound (%v)", err)
	case e.Status == statusInvalidOffset && store, e.Status == statusConsumerOffsetNotFound && !store:
		return ""
	case e.Status != statusResourceNotFound:
		return "not a status of this operation"
	}
	if applied, m := c.appliedModel(e.Replica); m.Resolves(q.Target) {
		return fmt.Sprintf("%s resolves in the metadata the replica applied (op %d)", q.Target, applied)
	}
	return ""
}

// evictedRequest checks an Eviction for a request's operation or body
// (reasons InvalidRequestOperation and InvalidRequestBody, client-ops.md
// 6.6): the model evicts the request the replica is reading so, with that
// reason. The session reasons are the client table model's
// (clienttable.go).
func (c *Checker) evictedRequest(e replica.Event) {
	if e.Reason != wire.EvictionInvalidRequestOperation && e.Reason != wire.EvictionInvalidRequestBody {
		return
	}
	a := c.admissionState()
	h := a.arriving
	if h == nil || a.arrivingReplica != e.Replica || h.Client != e.Client {
		c.fail(Violation{Name: AnswerDiverged, Replicas: []uint8{e.Replica},
			Detail: fmt.Sprintf("replica %d evicted client %s with %v, and it is reading no request of that client",
				e.Replica, e.Client, e.Reason)})
		return
	}
	inv, ok := c.requestOf(h.Client, h.Request)
	if !ok {
		return
	}
	if want := refmodel.Admit(inv.inv.Operation, inv.inv.Body); want.Kind != refmodel.Evict || want.Reason != e.Reason {
		c.fail(Violation{Name: AnswerDiverged, Replicas: []uint8{e.Replica},
			Detail: fmt.Sprintf("replica %d evicted client %s with %v for its %v request %d; the model's answer is %s",
				e.Replica, e.Client, e.Reason, inv.inv.Operation, h.Request, want)})
	}
}

// probedRequest checks a silent drop a replica reports by probe: a
// SendMessages it found undecodable must be one the model does not decode.
func (c *Checker) probedRequest(e replica.Event) {
	a := c.admissionState()
	h := a.arriving
	if h == nil || a.arrivingReplica != e.Replica || !strings.HasPrefix(e.Probe, probeSendDropped) {
		return
	}
	inv, ok := c.requestOf(h.Client, h.Request)
	if !ok || inv.inv.Operation != wire.OperationSendMessages {
		return
	}
	if t, err := refmodel.DecodeSendMessages(inv.inv.Body); err == nil {
		c.fail(Violation{Name: AnswerDiverged, Replicas: []uint8{e.Replica},
			Detail: fmt.Sprintf("replica %d dropped SendMessages request %d of client %s as undecodable (%s); the model decodes it (%s, %d bytes)",
				e.Replica, h.Request, h.Client, strings.TrimPrefix(e.Probe, probeSendDropped), t, len(inv.inv.Body))})
	}
}

// modelChanged notes the model's state after committed op p, if the op
// changed it (a successful metadata op): partition-plane answers are judged
// by the state the answering replica applied.
func (c *Checker) modelChanged(p *wire.PrepareHeader, reply []byte) {
	switch p.Operation {
	case wire.OperationRegister, wire.OperationLogout:
		return
	}
	body := reply[wire.HeaderSize:]
	if len(body) < 4 || binary.LittleEndian.Uint32(body) != 0 {
		return // a committed rejection changes nothing
	}
	a := c.admissionState()
	a.states = append(a.states, modelAt{op: p.Op, model: c.model.Clone()})
}

// appliedModel returns the op replica r has applied on the metadata plane
// and the model's state then.
func (c *Checker) appliedModel(r uint8) (uint64, *refmodel.Model) {
	applied := c.next[r] - 1
	a := c.admissionState()
	i := sort.Search(len(a.states), func(i int) bool { return a.states[i].op > applied })
	if i == 0 {
		return applied, refmodel.New(refmodel.DefaultLimits())
	}
	return applied, a.states[i-1].model
}

// offsetTakesEffect reports whether a consumer offset request may change a
// stored offset in some state: its body decodes and names a partition of
// an individual consumer.
func offsetTakesEffect(op wire.Operation, body []byte) bool {
	q, err := refmodel.DecodeOffsetRequest(body, op == wire.OperationStoreConsumerOffset)
	return err == nil && q.Admissible() == nil
}

// offFormatOnPurpose reports whether a client's Request breaks wire.md's
// request_checksum rule because the client sent another checksum on
// purpose (workload.Invocation.OffFormat: a bad request, which the raw path
// takes as it is).
func (c *Checker) offFormatOnPurpose(frame []byte, rule string) bool {
	if rule != "5.20 Request request_checksum" || len(frame) < wire.HeaderSize {
		return false
	}
	var h wire.RequestHeader
	h.Decode(wire.HeaderOf(frame))
	inv, ok := c.requestOf(h.Client, h.Request)
	return ok && inv.inv.OffFormat && inv.inv.Checksum == h.RequestChecksum
}

// sentPrepare checks a metadata prepare replica from sends: a client's
// CreateTopic or CreatePartitions is replicated as the model projects it,
// named before any replica applies it (a projection the replica's own
// decoder cannot read panics its commit).
func (c *Checker) sentPrepare(from uint8, frame []byte) {
	var p wire.PrepareHeader
	p.Decode(wire.HeaderOf(frame))
	inv, ok := c.requestOf(p.Client, p.Request)
	projected := p.Operation == wire.OperationCreateTopicWithAssignments || p.Operation == wire.OperationCreatePartitionsWithAssignments
	if !ok || !projected || !sameOperation(inv.inv.Operation, p.Operation) {
		return // a phantom, or a body replicated verbatim: the commit's checks (PhantomCommit)
	}
	if refmodel.Admit(inv.inv.Operation, inv.inv.Body).Kind != refmodel.Accepted {
		return // refused prepared: named at the prepare
	}
	if body := frame[wire.HeaderSize:]; !sameBody(inv.inv, p.Operation, body) {
		c.fail(Violation{Name: ProjectionDiverged, Replicas: []uint8{from}, Ops: []uint64{p.Op},
			Detail: fmt.Sprintf("replica %d sent op %d, %v of client %s request %d, with a %d-byte body a correct primary does not build from the %d-byte %v request",
				from, p.Op, p.Operation, p.Client, p.Request, len(body), len(inv.inv.Body), inv.inv.Operation)})
	}
}

// misrouted judges the group a partition primary prepared a request in, as
// it admits it (the request it is reading): the group of the partition the
// model routes the target to in the metadata the replica applied (1.5), one
// of the topic's for a Balanced send. Elsewhere (a backup, a later retry)
// the names may resolve otherwise by then, and nothing is judged.
func (c *Checker) misrouted(r uint8, p wire.PrepareHeader, group uint64, t refmodel.Target) string {
	a := c.admissionState()
	if h := a.arriving; h == nil || a.arrivingReplica != r || h.Client != p.Client || h.Request != p.Request {
		return ""
	}
	applied, m := c.appliedModel(r)
	groups := m.Groups(t)
	if slices.Contains(groups, group) {
		return ""
	}
	if len(groups) == 0 {
		return fmt.Sprintf("the model denies it ResourceNotFound: %s does not resolve in the metadata the replica applied (op %d)", t, applied)
	}
	return fmt.Sprintf("the model routes %s to group %v in the metadata the replica applied (op %d)", t, groups, applied)
}

// pollDenied judges a poll's status (5.28): a stream, topic or partition
// the replica's applied metadata does not hold (1009, 2010, 3007), for a
// body that decodes, of an individual consumer (any other poll is answered
// with an empty poll); Unauthenticated (40) on a connection its client is
// not bound to, which the checker does not follow.
func (c *Checker) pollDenied(e replica.Event, body []byte) string {
	if e.Status == statusUnauthenticated {
		return ""
	}
	q, err := refmodel.DecodePoll(body)
	switch {
	case err != nil:
		return fmt.Sprintf("the model answers it with an empty poll (%v)", err)
	case !q.Individual():
		return "the model answers a consumer group's poll with an empty poll"
	}
	applied, m := c.appliedModel(e.Replica)
	var holds bool
	switch e.Status {
	case statusStreamIDNotFound:
		holds = m.StreamResolves(q.Target)
	case statusTopicIDNotFound:
		holds = !m.StreamResolves(q.Target) || m.TopicResolves(q.Target)
	case statusPartitionNotFound:
		holds = !m.TopicResolves(q.Target) || m.Resolves(q.Target)
	default:
		return "not a status of a poll"
	}
	if holds {
		return fmt.Sprintf("%s does not fit that status in the metadata the replica applied (op %d)", q.Target, applied)
	}
	return ""
}
