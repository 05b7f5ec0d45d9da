package checker

import (
	"fmt"
	"strings"

	"github.com/iggy-vopr/vopr/checker/wirespec"
)

// The batch a client sends is held to wire.md 7 by the checker's own
// reader: a replica that drops a SendMessages request at admission as an
// invalid batch must be looking at a batch the format refuses. The bus
// verifies a SendMessages prepare's batch with the same code (DEVIATIONS
// 22), so a batch check that refuses valid batches refuses the clients'
// first: no prepare is ever built, and the run only stalls.

// ValidBatchRefused: a replica dropped a client's SendMessages at
// admission as an invalid batch, and the batch is valid by wire.md 7.
const ValidBatchRefused = "valid batch refused at admission"

// BatchRefusedProbe is the replica's probe for a SendMessages whose batch
// its admission refused.
const BatchRefusedProbe = "partition plane: SendMessages dropped at admission: invalid batch"

// AdmissionProbes tells the checker the probes replica r emitted while it
// handled frame, a client's frame.
func (c *Checker) AdmissionProbes(nowNs int64, r uint8, frame []byte, probes []string) {
	c.nowNs = nowNs
	if c.violation != nil || len(frame) < wirespec.HeaderSize || frame[wirespec.OffCommand] != wirespec.Request ||
		frame[wirespec.OffReqOperation] != 160 {
		return
	}
	refused := false
	for _, p := range probes {
		refused = refused || strings.HasSuffix(p, BatchRefusedProbe)
	}
	if !refused {
		return
	}
	// The body: a routing prefix of metadata_length bytes after its u32
	// length, then the batch (wire.md 7).
	body := frame[wirespec.HeaderSize:]
	if len(body) < 4 {
		return
	}
	at := 4 + int(wirespec.U32(body, 0))
	if at > len(body) {
		return
	}
	if p := wirespec.CheckUnstampedBatch(body[at:]); p != nil {
		return
	}
	c.fail(Violation{Name: ValidBatchRefused, Replicas: []uint8{r},
		Detail: fmt.Sprintf("replica %d dropped SendMessages request %d of client %s at admission as an invalid batch, and its batch of %d bytes is valid by wire.md 7",
			r, wirespec.U64(frame, wirespec.OffReqRequest), wirespec.Get128(frame, wirespec.OffReqClient), len(body)-at)})
}
