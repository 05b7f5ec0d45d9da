package sim

import "github.com/iggy-vopr/vopr/network"

// Trap names one rule of consensus.md's first section (a trap, a
// correction) or of the view change's merge that a correct replica can
// reach, the probe that shows a seed ran the path the rule guards, and the
// scenario family whose seeds are meant to reach it. The campaign table
// reports, for each, the share of its family's seeds the probe fired in:
// a guard no seed exercises proves nothing.
type Trap struct {
	Rule   string
	Probe  string
	Family string
}

// Traps returns the rules, in consensus.md's order, then the merge's.
// Rules that cannot be reached are in UnreachedRules, with why.
func Traps() []Trap {
	return []Trap{
		{"correction 1 / trap: ungated acks (no PrepareOk before log_view is durable)", "acks held until the view is durable", famAny},
		{"correction 4: unanswered probes end in an election", "probe unanswered: election", famCrash},
		{"correction 6: the incarnation guard", "stale StartView ignored", famStale},
		{"trap: acking above a hole", "acks stop below a hole", famAny},
		{"trap: commit walk without identity check", "adopted log replaces another prepare the journal held", famRollback},
		{"trap: commit walk without identity check (the chain)", "journal frame off the hash chain not taken as canonical", famRollback},
		{"trap: re-ack by slot occupancy", "adopted log replaces another prepare the journal held", famRollback},
		{"trap: torn tail versus corrupt head", "vote reports a damaged slot's op unknown, not nacked", famStorage},
		{"repair: a repaired prepare checked by the hash chain", "repaired prepare checked by the hash chain", famAny},
		{"repair: a repaired prepare not canonical is rejected", "repaired prepare rejected: not canonical", famRollback},
		{"merge: an op truncated on a nack quorum", "view change truncated an op on a nack quorum", famVCFaults},
		{"merge: a body nobody reported is waited for", "view change waits for a body nobody reported", famVCFaults},
		{"merge: a header is waited for", "view change waits for a header", famVCFaults},
		{"merge: the log ends below the lowest op with a nack quorum", "view change truncated above an op with a nack quorum", famVCFaults},
		{"merge: canonical headers that conflict or break the chain are ignored", "view change ignored canonical headers off the hash chain", famVCFaults},
		{"merge: a header the op above names, from a lower log_view", "view change took a header the op above names", famVCFaults},
		{"merge: vote headers off the hash chain taken as unknown", "DoViewChange reports headers that do not chain as unknown", famVCFaults},
	}
}

// UnreachedRule is a rule a correct replica of today cannot reach, and why.
type UnreachedRule struct {
	Rule, Probe, Why string
}

// UnreachedRules returns the rules no scenario family reaches.
func UnreachedRules() []UnreachedRule {
	return []UnreachedRule{
		{"correction 5: the StartView skip rule (op below commit_min, view = log_view)", "StartView below commit_min skipped",
			"a Normal replica of that view returns earlier (already installed); a restarted one has commit_min 0 or its checkpoint's op, and a state transfer installs only in Normal status, where log_view is the view: either way commit_min is a committed op, at or below the head of the log of every view from the one it was committed in"},
	}
}

// InFamily reports whether a seed of options o belongs to the scenario
// family: whether its world has what the family's probes need.
func InFamily(family string, o Options) bool {
	storage := o.LatentProbability > 0 || o.CorruptSectorProbability > 0 || o.MisdirectProbability > 0
	switch family {
	case famAny, famFaults:
		return true
	case famCrash:
		return o.CrashProbability > 0
	case famPartition:
		return o.PartitionMode != network.PartitionNone && o.PartitionProbability > 0 || o.Rollback
	case famStorage:
		return storage
	case famWire:
		return o.CorruptProbability > 0 || o.ResetProbability > 0
	case famRollback:
		return o.Rollback && o.Replicas >= 3
	case famBackups:
		return o.Replicas >= 2
	case famSends:
		return o.Sends
	case famBeyond:
		return !o.MemoryLossBounded
	case famRing:
		return o.EvictedRing > 0
	case famFlush:
		return o.FlushMessages < 1024
	case famTable:
		return o.Clients > 8
	case famJournal:
		return o.JournalSlots > 0
	case famLong:
		return o.SafetyTicksMax >= LongSafetyTicks
	case famStale:
		return o.StaleAnswers && o.Replicas >= 2
	case famVCFaults:
		return o.ViewChangeFaults && o.Replicas >= 2
	}
	panic("sim: no scenario family " + family)
}

// ProbeFired reports whether probes counts name as fired on either plane.
func ProbeFired(probes map[string]int, name string) bool {
	return probes[name] > 0 || probes[partitionPlanePrefix+name] > 0
}
