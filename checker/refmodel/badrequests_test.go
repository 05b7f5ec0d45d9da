package refmodel

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/iggy-vopr/vopr/replica/metadata"
	partplane "github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
	"pgregory.net/rapid"
)

// TestDifferentialBadRequests: the workload's bad requests (what -bad-requests
// sends: workload.BadMix), interleaved with the default mix's, run through the
// replica's path and this model as TestDifferentialRequests runs its own
// draws: the same refusal, the same projection, byte-equal replies; and
// the partition plane's bodies decode alike.
func TestDifferentialBadRequests(t *testing.T) {
	var checked, skipped atomic.Int64
	var seen outcomes
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		mix := workload.NewMix(rand.New(rand.NewPCG(seed, 1)), true)
		bad := workload.NewBadMix(rand.New(rand.NewPCG(seed, 2)), mix, 1)
		p := newPair(t, metadata.DefaultLimits(), &checked, &skipped, &seen)
		for range rapid.IntRange(1, 60).Draw(t, "n") {
			op := mix.Next()
			if rapid.IntRange(0, 2).Draw(t, "bad") > 0 {
				op = bad.Next()
			}
			switch {
			case op.Operation == wire.OperationSendMessages:
				_, err := DecodeSendMessages(op.Body)
				_, werr := partplane.DecodeSendMessages(op.Body)
				if (err == nil) != (werr == nil) || (err != nil) != op.Silent {
					t.Fatalf("SendMessages % x (silent %v): model %v, replica %v", trunc(op.Body), op.Silent, err, werr)
				}
				seen.add(fmt.Sprintf("SendMessages decodes %v", err == nil))
			case op.Operation == wire.OperationStoreConsumerOffset || op.Operation == wire.OperationDeleteConsumerOffset:
				store := op.Operation == wire.OperationStoreConsumerOffset
				_, err := DecodeOffsetRequest(op.Body, store)
				_, werr := partplane.DecodeOffsetRequest(op.Body, store)
				if (err == nil) != (werr == nil) {
					t.Fatalf("%v % x: model %v, replica %v", op.Operation, trunc(op.Body), err, werr)
				}
				seen.add(fmt.Sprintf("%v decodes %v", op.Operation, err == nil))
			case op.Operation == wire.OperationNonReplicated:
				_, err := DecodePoll(op.Body)
				_, werr := partplane.DecodePoll(op.Body)
				if (err == nil) != (werr == nil) {
					t.Fatalf("PollMessages % x: model %v, replica %v", trunc(op.Body), err, werr)
				}
				seen.add(fmt.Sprintf("PollMessages decodes %v", err == nil))
			default:
				p.step(request{op: op.Operation, body: op.Body}, 0)
			}
		}
	})
	t.Logf("%d requests checked; outcomes:%v", checked.Load(), &seen)
}
