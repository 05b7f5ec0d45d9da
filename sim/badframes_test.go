package sim

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/checker/wirespec"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Each catalogue entry, built many times over, breaks the one receiver
// rule it is filed under, by the checker's reading of wire.md
// (wirespec.Receive) and by the replica's codec (wire.CheckFraming and
// wire.Validate, or the bus's dispatch): a frame that broke two rules, or
// none, would let a refusal by the wrong check pass for the right one.
func TestBadFramesBreakTheirRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const sizeMax = 128 << 10
	for i, k := range badKinds {
		for j := range 200 {
			x := &badCtx{rng: rng, cluster: wire.ClusterID("vopr"), from: uint8(rng.IntN(3)), replicas: 3 + rng.IntN(3),
				sizeMax: sizeMax, view: rng.Uint32N(40), op: rng.Uint64N(300)}
			x.commit = rng.Uint64N(x.op + 1)
			if j%2 == 0 {
				x.group = 1 + rng.Uint64N(100)
			}
			f := k.build(x)
			r := wirespec.Receive(f, x.replicas, sizeMax)
			if r == nil || r.Rule != k.rule {
				t.Fatalf("entry %d (%s), build %d: wirespec finds %v", i, k.rule, j, r)
			}
			if r.Close != (wire.CheckFraming(f, sizeMax) != nil) {
				t.Fatalf("entry %d (%s): wirespec closes %v, the codec's framing says %v", i, k.rule, r.Close, wire.CheckFraming(f, sizeMax))
			}
			if c := wire.HeaderOf(f).Command(); r.Close || c < wire.CommandRequest || c == wire.CommandRequest || c.IsClientBound() || c.IsHandshake() {
				continue // framing, or the bus's dispatch
			}
			err := wire.Validate(f)
			var rule wire.Rule
			if err != nil && !errors.As(err, &rule) {
				t.Fatalf("entry %d: %v", i, err)
			}
			if k.rule == wirespec.RuleReplicaRange {
				if err != nil {
					t.Fatalf("entry %d (%s): the codec refuses it: %v", i, k.rule, err)
				}
				continue
			}
			if err == nil {
				t.Fatalf("entry %d (%s), build %d: the codec passes it", i, k.rule, j)
			}
		}
	}
}

// The catalogue reaches every receiver rule wirespec names but the seals
// (the network's bit flips test those) and the size that does not delimit
// its frame (the network delivers whole frames).
func TestBadFramesCoverTheReceiverRules(t *testing.T) {
	covered := map[string]bool{}
	for _, k := range badKinds {
		covered[k.rule] = true
	}
	for _, rule := range []string{
		wirespec.RuleSizeBelowHeader, wirespec.RuleSizeAboveMax, wirespec.RuleCommandRange, wirespec.RuleNoTraffic,
		wirespec.RuleRequest, wirespec.RuleClientBound, wirespec.RuleHandshake, wirespec.RuleOperation, wirespec.RuleOutcome,
		wirespec.RuleBodySeal, wirespec.RuleReservedFrame, wirespec.RuleReserved, wirespec.RuleRelease,
		wirespec.RuleHeaderOnly, wirespec.RuleSuffixSize, wirespec.RuleSuffixLength, wirespec.RuleBitsets, wirespec.RuleLogView,
		wirespec.RuleCommitOp, wirespec.RuleFromOp, wirespec.RuleFromTo, wirespec.RuleAvailable, wirespec.RuleTransient,
		wirespec.RuleAvailableBoth, wirespec.RuleRefusalBody, wirespec.RuleLen, wirespec.RuleClient, wirespec.RuleNonce,
		wirespec.RuleSession, wirespec.RuleRequestNumber, wirespec.RuleOutcomeFields, wirespec.RuleReplicaRange,
		wirespec.RuleBatchLength, wirespec.RuleBatchReserved, wirespec.RuleBatchCount, wirespec.RuleBatchFrames,
		wirespec.RuleBatchMsgSum, wirespec.RuleBatchMsgReserv, wirespec.RuleBatchChecksum,
	} {
		if !covered[rule] {
			t.Errorf("no catalogue entry breaks %s", rule)
		}
	}
}

// Each void entry is well formed on the wire: the receiver's rules (the
// checker's and the codec's) pass it, and a receiver must take it in.
func TestVoidFramesPassTheWireRules(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i, k := range voidKinds {
		built := 0
		for range 200 {
			x := &badCtx{rng: rng, cluster: wire.ClusterID("vopr"), from: uint8(rng.IntN(3)), replicas: 3, sizeMax: 128 << 10,
				view: rng.Uint32N(5), op: rng.Uint64N(300), unknownGroup: 1<<40 + rng.Uint64N(1<<20)}
			x.commit = rng.Uint64N(x.op + 1)
			f := k.build(x)
			if f == nil {
				continue
			}
			built++
			if r := wirespec.Receive(f, x.replicas, x.sizeMax); r != nil {
				t.Fatalf("entry %d (%s): wirespec refuses it: %v", i, k.name, r)
			}
			if err := wire.Validate(f); err != nil {
				t.Fatalf("entry %d (%s): the codec refuses it: %v", i, k.name, err)
			}
		}
		if built == 0 {
			t.Fatalf("entry %d (%s) never built", i, k.name)
		}
	}
}

// The nemesis reaches what it is for on a seed of six replicas with auth:
// frames breaking most rules of the catalogue refused on established
// connections, void frames taken in, impostors in the handshake, and a run
// that passes (every refusal as the checker's reading of wire.md wants it).
// The run is twice the swarm's (requests and safety ticks): at the swarm's
// length the seeds of 1..60 reach 28 rules at most since a deferred crash
// waits to fire (issue 28) and the bad requests draw from their own stream,
// and this one reaches all 39.
func TestBadFramesNemesisReachesTheRefusals(t *testing.T) {
	o := Swarm(1)
	o.BadFrames = true
	o.Requests *= 2
	o.SafetyTicksMax *= 2
	if !o.Auth || o.Replicas < 3 {
		t.Fatalf("seed 1 drew auth %v, %d replicas: pick another seed", o.Auth, o.Replicas)
	}
	res := Run(o, nil)
	if res.Outcome != Pass {
		t.Fatalf("%s: %s", res.Outcome, res.Violation)
	}
	rules, voids, impostors, gone, injected := 0, 0, 0, 0, 0
	for name, n := range res.Probes {
		switch {
		case strings.HasPrefix(name, "bad frames: injected, breaking "):
			rules++
			injected += n
		case strings.HasPrefix(name, "bad frames: void frame injected: "):
			voids++
			injected += n
		case strings.HasPrefix(name, "bad frames: impostor sent "):
			impostors++
		case name == "bad frames: the connection was gone":
			gone += n
		}
	}
	if rules < len(badKinds)*3/4 || voids < len(voidKinds)/2 || impostors < 3 || gone > injected/10 {
		t.Fatalf("%d of %d rules, %d of %d void kinds, %d impostor kinds, %d of %d injections on a gone connection (probes %v)",
			rules, len(badKinds), voids, len(voidKinds), impostors, gone, injected, res.Probes)
	}
}
