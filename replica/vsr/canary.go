package vsr

import "github.com/iggy-vopr/vopr/replica/wire"

// Helpers of the canary suite's deliberate bugs (canary/README.md): reached
// only from a branch on a switch of canary/bug, false in a normal build.

// canaryVoteBeforePersist is canary_dvc_before_persist's bug: it sends our
// DoViewChange at once, to every replica, while the new view is still being
// made durable (the gate of send and broadcast skipped).
func (g *Group) canaryVoteBeforePersist() {
	g.probe("canary: DoViewChange before its view is durable")
	g.vc.dvcSent = true
	g.dvcTimeout.start()
	g.persist()
	vote := g.buildVote()
	dvc := wire.DoViewChangeHeader{Prefix: g.prefix(), Op: vote.op, Commit: vote.commit, Group: g.cfg.Group,
		LogView: vote.logView, NackBitset: vote.nack, PresentBitset: vote.present}
	frame := wire.BuildFrame(&dvc, wire.EncodeSuffix(vote.entries))
	if g.Primary() == g.cfg.Replica {
		g.countVote(vote)
	}
	for r := range g.cfg.ReplicaCount {
		if r != g.cfg.Replica {
			g.deps.Out.Send(r, frame)
		}
	}
	g.noteSent()
}

// canaryJournalHeader is canary_apply_unchecked's bug: commitJournal takes
// the header of the frame the journal holds for op as the one to apply,
// whether or not it is the canonical one (c, known).
func (g *Group) canaryJournalHeader(op uint64, c wire.Header, known bool) (wire.Header, bool) {
	f, held := g.deps.Journal.Frame(op)
	if !held || known && wire.HeaderOf(f).Checksum() == c.Checksum() {
		return c, known
	}
	g.probe("canary: applied a frame without its identity check")
	return *wire.HeaderOf(f), true
}

// canaryNackCorrupt is canary_nack_corrupt's bug: buildVote nacks an op
// above the vote's commit whose slot the journal cannot read (KnowledgeNone)
// or holds only the header of (a corrupt body), as if the replica had proved
// it never prepared it (KnowledgeNever).
func (g *Group) canaryNackCorrupt(v *dvcVote, op uint64, i int) {
	if op <= v.commit || v.present.Bit(i) || v.nack.Bit(i) {
		return
	}
	if k := g.deps.Journal.Knowledge(op); k == KnowledgeNone || k == KnowledgeHeader {
		g.probe("canary: nacked a corrupt slot's op")
		v.nack = v.nack.WithBit(i)
	}
}

// canaryChainUnchecked is canary_chain_unchecked's bug: extendCanonDown
// takes the frame the journal holds for op as canonical without checking
// that its identity is parent, the parent named by the canonical op above.
func (g *Group) canaryChainUnchecked(op uint64, parent wire.U128) {
	if f, held := g.deps.Journal.Frame(op); held && wire.HeaderOf(f).Checksum() != parent {
		g.probe("canary: journal frame taken as canonical off the hash chain")
		g.canon[op] = *wire.HeaderOf(f)
	}
}

// canaryDropTail is canary_vote_drops_tail's bug: the vote ends at its
// commit point, and the ops above it (which this replica may have
// acknowledged) go unreported.
func (g *Group) canaryDropTail(v *dvcVote) {
	drop := int(v.op - v.commit)
	if v.op <= v.commit || drop >= len(v.entries) {
		return
	}
	g.probe("canary: DoViewChange ends at its commit point")
	var nack, present wire.U128
	for i := drop; i < len(v.entries); i++ {
		if v.nack.Bit(i) {
			nack = nack.WithBit(i - drop)
		}
		if v.present.Bit(i) {
			present = present.WithBit(i - drop)
		}
	}
	v.entries, v.nack, v.present, v.op = v.entries[drop:], nack, present, v.commit
}
