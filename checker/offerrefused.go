package checker

import (
	"encoding/binary"
	"fmt"

	"github.com/iggy-vopr/vopr/checker/wirespec"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// OfferRefused names a state-transfer session that refused an offer its
// replica could take: a StateTransferTarget whose manifest reads by wire.md
// 8.1 in its plane's order (manifest.go), whose frontier artifact carries
// the op's identity, whose artifacts each fit the receiver's bound, and
// whose commit_op is above what the replica has applied (the session's
// need). Such an offer is what a correct server sends (manifestSent holds
// every sender to it), so refusing it costs the replica its only way past
// a peer's retained floor: a stall the liveness check would report later,
// and without the offer that caused it (issue 26: a receiver that refused
// every partition offer, fetch.go:196, passed 100 seeds). The replica
// reports each refusal with its need and bound (EventOfferRefused); the
// checker judges the offer by its own reading.
const OfferRefused = "state offer refused"

// offerRefused judges replica r's refusal of the offering frame, made with
// need the op it had applied and artifactMax its bound on one artifact.
func (c *Checker) offerRefused(r uint8, frame []byte, need, artifactMax uint64, why string) {
	if c.violation != nil || len(frame) <= sttAvailableAt || wire.HeaderOf(frame).Command() != wire.CommandStateTransferTarget ||
		frame[sttAvailableAt] != 1 {
		return // no offer (the server had none): nothing to take
	}
	le := binary.LittleEndian
	commitOp, group := le.Uint64(frame[sttCommitOpAt:]), le.Uint64(frame[sttGroupAt:])
	body := frame[wire.HeaderSize:]
	es, err := readISM1(body)
	if err != nil || commitOp <= need {
		return
	}
	frontier := len(es) - 1 // a partition offer's consumer offsets carry the op's identity
	if group == wire.MetadataGroup {
		if metadataManifestProblem(es, commitOp) != "" {
			return
		}
		frontier = 0 // a metadata offer's snapshot does
	} else if partitionManifestProblem(es, commitOp) != "" {
		return
	}
	if identityZero(body, frontier) {
		return
	}
	for _, e := range es {
		if e.length > artifactMax {
			return
		}
	}
	c.fail(Violation{Name: OfferRefused, Replicas: []uint8{r}, Ops: []uint64{commitOp},
		Detail: fmt.Sprintf("replica %d refused an offer of group %d at op %d, above the op %d it had applied, whose manifest lists kinds %v in order, each artifact within %d bytes, with the op's identity (the session's reason: %s)",
			r, group, commitOp, need, kinds(es), artifactMax, why)})
}

// identityZero reports whether entry i of an ISM1 manifest has no identity
// (DEVIATIONS.md 62: bytes 25..41 of an entry of at least 41 bytes; an
// entry of Iggy's 25 bytes carries none).
func identityZero(body []byte, i int) bool {
	entryLen := int(body[8])
	if entryLen < 41 {
		return true
	}
	return wirespec.Get128(body, ism1HeaderLen+i*entryLen+25).IsZero()
}
