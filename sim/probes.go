package sim

import (
	"sort"
	"strings"
)

// Probe declares one coverage probe: a name a replica or the harness
// reports when a rare path runs (Result.Probes counts them per seed), what
// it means, and the scenario family meant to reach it. Prefix marks a
// name that the call site completes with a reason ("forwarded register
// not accepted: " + the outcome). A consensus probe of package vsr fires
// on both planes: in a partition group it is reported as "partition
// plane: " + its name (PartitionPlane), and counts as this declaration.
//
// The catalogue is the list the campaign table's "never fired" section
// reads, and TestProbeCatalogueMatchesTheCallSites keeps it and the
// call sites in step.
type Probe struct {
	Name     string
	Meaning  string
	Scenario string
	Prefix   bool
}

// Scenario families, as the catalogue names them.
const (
	famAny       = "any seed"
	famCrash     = "crashes and restarts"
	famPartition = "network partitions"
	famStorage   = "storage faults"
	famWire      = "wire corruption and resets"
	famRollback  = "the rollback nemesis"
	famBackups   = "clients at backups (forwarding)"
	famSends     = "sends (the partition planes)"
	famBeyond    = "beyond the memory-loss bound"
	famRing      = "a small evicted ring (-evicted-ring)"
	famFlush     = "segment flushes (-flush-messages)"
	famTable     = "more clients than client-table slots"
	famJournal   = "a small journal ring (-journal-slots)"
	famLong      = "long runs (-long)"
	famFaults    = "the fault classes themselves"
	famStale     = "the stale-answer nemesis"
	famVCFaults  = "the view-change fault nemesis"
	famBadFrames = "the bad-frames nemesis"
	famBad       = "bad requests (-bad-requests)"
)

// partitionPlanePrefix is how a partition group's consensus probes are
// reported (replica/partitions.go partitionSink).
const partitionPlanePrefix = "partition plane: "

// ProbeCatalogue returns every declared coverage probe, by name.
func ProbeCatalogue() []Probe {
	p := []Probe{
		// The consensus core (replica/vsr), both planes.
		{Name: "DoViewChange reports headers that do not chain as unknown", Meaning: "a vote's suffix had headers off the hash chain: they are taken as unknown", Scenario: famRollback},
		{Name: "RangeEvicted sent", Meaning: "a repair asked for ops below the journal's retained floor", Scenario: famRing},
		{Name: "pipeline op applied by the journal walk: it leaves the pipeline", Meaning: "a primary applied from its journal ops still in its pipeline (an install raised commit_max past them)", Scenario: famRing},
		{Name: "repair: ops applied but not held answered as evicted", Meaning: "a partition replica asked for ops it applied but its memory journal no longer holds answered RangeEvicted (VOPR seed 22354)", Scenario: famRing},
		{Name: "StartView without headers", Meaning: "a StartView named an op above commit_min but carried no headers: a full one is asked for", Scenario: famPartition},
		{Name: "StartView without headers, its ops committed: the replica catches up before adopting it", Meaning: "a StartView without headers whose commit covers its op: the replica stays Recovering, applies the committed ops (repair, state transfer) and adopts the view at its head (VOPR seed 3965681371)", Scenario: famCrash},
		{Name: "StartView below commit_min skipped", Meaning: "a StartView of our log_view below commit_min was skipped (consensus.md correction 5)", Scenario: famCrash},
		{Name: "acks held until the view is durable", Meaning: "a backup held its acks while its log_view was only in memory (trap: ungated acks)", Scenario: famAny},
		{Name: "acks stop below a hole", Meaning: "a backup held a durable op above a missing one and acked neither (trap: acking above a hole)", Scenario: famAny},
		{Name: "commit walk met another prepare at the op: repaired, not applied", Meaning: "the journal held another prepare at the op to apply (trap: commit walk without identity check)", Scenario: famRollback},
		{Name: "prepare of another identity than the slot's: not acknowledged", Meaning: "a committed op's slot held another prepare than the one retransmitted (trap: re-ack by slot occupancy)", Scenario: famRollback},
		{Name: "prepare of another identity than the view's: ignored", Meaning: "a prepare at an op whose canonical header differs was ignored (trap: re-ack by slot occupancy)", Scenario: famRollback},
		{Name: "prepare replaces another prepare in its slot", Meaning: "a backup journaled the view's prepare over another one in its slot (trap: re-ack by slot occupancy)", Scenario: famRollback},
		{Name: "vote reports a damaged slot's op unknown, not nacked", Meaning: "a vote reported a slot it could not read as unknown, not as never prepared (trap: torn tail versus corrupt head)", Scenario: famStorage},
		{Name: "vote nacks a stale op its slot shows alone", Meaning: "a vote nacked an op whose slot holds only a prepare its log_view's log replaced (off the chain, or a leftover) and shows no other written there", Scenario: famVCFaults},
		{Name: "adopted log replaces another prepare the journal held", Meaning: "a replica adopting a view's log held another prepare at a canonical op; the reconcile forgot its body (traps: re-ack by slot occupancy, commit walk without identity check)", Scenario: famRollback},
		{Name: "amnesiac replica caught up: it votes again", Meaning: "a replica that lost its memory journal applied a view's log and counts again", Scenario: famCrash},
		{Name: "amnesiac replica votes knowing nothing", Meaning: "two replicas: an amnesiac backup votes an empty log (DEVIATIONS 51)", Scenario: famCrash},
		{Name: "amnesiac replica withholds its DoViewChange", Meaning: "a replica that lost its memory journal does not vote until caught up", Scenario: famCrash},
		{Name: "commit from a newer view", Meaning: "a Commit of a later view made a replica start a view change", Scenario: famPartition},
		{Name: "committed prepare acknowledged again", Meaning: "a retransmitted prepare at or below commit_min is acknowledged again", Scenario: famPartition},
		{Name: "corrupt slot repaired", Meaning: "a slot whose body was corrupt was repaired from a peer", Scenario: famStorage},
		{Name: "journal leftover above the log_view's head reported blank", Meaning: "a restart found, above the head its log_view was persisted with, an op stamped before that log_view (a forget write the reconcile lost): its vote reports it blank", Scenario: famVCFaults},
		{Name: "journal frame off the hash chain not taken as canonical", Meaning: "a journaled frame below a canonical op did not chain and was not taken", Scenario: famRollback},
		{Name: "journal wrap: backpressure until a checkpoint frees the next slot", Meaning: "the primary's next op would overwrite an op above its durable checkpoint: the request waits", Scenario: famJournal},
		{Name: "journal wrap: a prepare waits for a checkpoint to free its slot", Meaning: "a replica left a prepare unjournaled (and unacked) until its checkpoint frees the slot", Scenario: famJournal},
		{Name: "journal wrap: a prepare's slot already held a newer op", Meaning: "a replica rebuilding below a lost checkpoint met a slot its ring wrapped past", Scenario: famStorage},
		{Name: "journal wrap: the primary's next slot already held a newer op", Meaning: "a primary rebuilding below a lost checkpoint cannot prepare: it asks for a state transfer", Scenario: famStorage},
		{Name: "journal wrapped: a slot reused", Meaning: "a journal wrote an op over the covered op its slot held", Scenario: famJournal},
		{Name: "commit walk met an op its ring wrapped past: state transfer", Meaning: "a replica whose checkpoint rotted needs an op its ring no longer holds", Scenario: famStorage},
		{Name: "StartView beyond the journal's ring: the replica catches up before adopting it", Meaning: "a StartView's head lies above the ring: the replica stays Recovering, applies the view's committed ops and checkpoints first", Scenario: famJournal},
		{Name: "StartView adopted after catching up", Meaning: "a durable checkpoint freed the ring for a held StartView's log, or the replica applied a held StartView's head", Scenario: famJournal},
		{Name: "reconcile superseded by a later one: its completion does nothing", Meaning: "a StartView's reconcile began while a merge's ran: only the later one's completion goes Normal", Scenario: famCrash},
		{Name: "reconcile leaves an op its ring cannot hold yet", Meaning: "an adopted log reaches past the ring: the op's header is recorded once a checkpoint frees its slot", Scenario: famJournal},
		{Name: "plane refused to stamp a prepare", Meaning: "a partition primary could not stamp (a prepare below it missing)", Scenario: famSends},
		{Name: "prepare dropped: its body is corrupt", Meaning: "a received prepare's body failed its checksum", Scenario: famWire},
		{Name: "prepare from a newer view", Meaning: "a prepare of a later view made a replica catch up to that view", Scenario: famPartition},
		{Name: "prepare gap", Meaning: "a backup received a prepare above its head + 1 and asked for the gap", Scenario: famPartition},
		{Name: "prepare refused by the plane: stamp not this replica's next", Meaning: "a backup's stamp check refused a prepare (a hole below it)", Scenario: famSends},
		{Name: "prepare repaired", Meaning: "a missing or damaged prepare came back by repair", Scenario: famAny},
		{Name: "primary restarted: election", Meaning: "a primary restarted and began a view change", Scenario: famCrash},
		{Name: "primary suspected", Meaning: "a backup heard no heartbeat in time and started a view change", Scenario: famPartition},
		{Name: "probe answered", Meaning: "a recovering replica's probe for the view was answered", Scenario: famCrash},
		{Name: "probe unanswered: election", Meaning: "a recovering replica heard nothing and started an election", Scenario: famCrash},
		{Name: "queued request dropped: the plane refused to stamp it", Meaning: "a partition primary dropped a queued send it could not stamp", Scenario: famSends},
		{Name: "repair: the primary cannot vouch for ops an install skipped", Meaning: "a primary whose journal below its installed op may hold stale prepares answered RangeEvicted for them", Scenario: famRing},
		{Name: "repair answered with RangeEvicted", Meaning: "a repair request met a peer's retained floor", Scenario: famRing},
		{Name: "repair asks the primary below a stretch nobody served", Meaning: "a backup's repair rotation asked its primary for the lowest ops it cannot vouch for, below a stretch no peer served", Scenario: famCrash},
		{Name: "repair re-requested", Meaning: "a repair made no progress and was asked again", Scenario: famPartition},
		{Name: "repair served", Meaning: "a replica answered a repair request", Scenario: famAny},
		{Name: "repaired prepare checked by the hash chain", Meaning: "a repaired prepare's identity came from the chain, not a canonical header", Scenario: famStorage},
		{Name: "repaired prepare dropped: already held", Meaning: "a repair answer for an op already held", Scenario: famAny},
		{Name: "repaired prepare dropped: its body is corrupt", Meaning: "a repaired prepare failed its body checksum", Scenario: famWire},
		{Name: "repaired prepare rejected: not canonical", Meaning: "a repaired prepare's identity differs from the canonical header", Scenario: famRollback},
		{Name: "single replica forgot ops above a hole in its log", Meaning: "a one-replica cluster restarted with a hole and dropped what was above it", Scenario: famCrash},
		{Name: "stale StartView ignored", Meaning: "a StartView answering an earlier incarnation's probe was ignored (consensus.md correction 6)", Scenario: famStale},
		{Name: "stale primary answered with StartView", Meaning: "a replica of a newer view answered an old primary with its StartView", Scenario: famPartition},
		{Name: "undecodable DoViewChange suffix", Meaning: "a vote's suffix did not decode", Scenario: famWire},
		{Name: "undecodable StartView suffix", Meaning: "a StartView's suffix did not decode", Scenario: famWire},
		{Name: "view change deadlocked: no header for an op without a nack quorum", Meaning: "a merge found an op known by nobody and not provably uncommitted", Scenario: famStorage},
		{Name: "view change ignored canonical headers off the hash chain", Meaning: "the merge dropped headers that did not chain to the chosen log", Scenario: famRollback},
		{Name: "view change timed out", Meaning: "a view change did not finish in time and the next view was tried", Scenario: famPartition},
		{Name: "view change took a header the op above names", Meaning: "the merge recovered an op's header from its successor's parent", Scenario: famVCFaults},
		{Name: "view change truncated above an op with a nack quorum", Meaning: "the merge truncated the log above a provably uncommitted op", Scenario: famStorage},
		{Name: "view change truncated an op on a nack quorum", Meaning: "the merge truncated an op a nack quorum proved uncommitted", Scenario: famStorage},
		{Name: "view change waits for a body nobody reported", Meaning: "the new primary waits for a body that no vote reported", Scenario: famStorage},
		{Name: "view change: the head is applied here, its header is not needed", Meaning: "a new primary that applied the committed head (a state transfer's op, whose header no journal holds) started the view without it", Scenario: famRing},
		{Name: "view change waits for a header", Meaning: "the new primary waits for a header to decide an op", Scenario: famStorage},
		{Name: "view started without us: StartView requested", Meaning: "a replica in view change for a view that started without it asked for the StartView", Scenario: famPartition},

		// The replica (replica/): journal recovery, clients, forwarding.
		{Name: "client frame dropped", Meaning: "a client frame that did not validate was dropped", Scenario: famWire},
		{Name: "client framing error: connection closed", Meaning: "a client stream lost its framing and was closed", Scenario: famWire},
		{Name: "replica recovered from a used journal", Meaning: "a restart opened a journal that held ops", Scenario: famCrash},
		{Name: "state transfer started", Meaning: "a repair met RangeEvicted above commit_min: the replica asked a peer for its checkpoint", Scenario: famCrash},
		{Name: "state transfer offered", Meaning: "a replica offered its durable checkpoint (StateTransferTarget with a manifest)", Scenario: famCrash},
		{Name: "state transfer refused: no checkpoint to offer", Meaning: "a replica without a durable checkpoint (or recovering) refused a state transfer", Scenario: famCrash},
		{Name: "state transfer refused", Meaning: "a receiver's session met a refusal or an offer it could not use", Scenario: famCrash},
		{Name: "state transfer started over with another replica", Meaning: "a refused or failed session moved to the next peer with a new nonce", Scenario: famCrash},
		{Name: "state transfer gave up: every peer refused or failed", Meaning: "no peer had an offer; the next RangeEvicted starts over", Scenario: famCrash},
		{Name: "state transfer retried: a request went unanswered", Meaning: "a state-transfer request stalled and was sent again", Scenario: famCrash},
		{Name: "state transfer retried: an artifact failed its checksum", Meaning: "a pulled artifact failed its manifest checksum and is pulled again", Scenario: famWire},
		{Name: "state transfer retried: the offer expired", Meaning: "the server no longer knew the session's nonce (transient refusal)", Scenario: famCrash},
		{Name: "state transfer failed: its retries are used up", Meaning: "a session ran out of stall or checksum retries", Scenario: famCrash},
		{Name: "state transfer failed: an artifact does not decode", Meaning: "verified artifacts did not decode (a bug on one side)", Scenario: famFaults},
		{Name: "state transfer no longer needed: the replica caught up", Meaning: "the replica applied the offered op by itself before the install", Scenario: famCrash},
		{Name: "state transfer completed", Meaning: "a replica installed a state a state transfer brought", Scenario: famCrash},
		{Name: "state transfer: a crash landed during the install", Meaning: "a replica crashed with an install's checkpoint or superblock write in flight", Scenario: famCrash},
		{Name: "state transfer installed", Meaning: "the consensus group moved commit_min to an installed checkpoint", Scenario: famCrash},
		{Name: "checkpoint written", Meaning: "the superblock recorded a checkpoint of the metadata plane", Scenario: famAny},
		{Name: "checkpoint waits: the previous one is still being written", Meaning: "a checkpoint came due while the last one's write was in flight, and is written after it", Scenario: famAny},
		{Name: "checkpoint superseded: a newer one came due while it waited", Meaning: "two checkpoints came due during one write: the newer is written", Scenario: famAny},
		{Name: "state restored from a checkpoint", Meaning: "a restart restored the metadata state from the checkpoint the superblock records", Scenario: famCrash},
		{Name: "checkpoint unreadable at recovery: the state is rebuilt below it", Meaning: "a restart found no intact area of its checkpoint (DEVIATIONS 61)", Scenario: famStorage},
		{Name: "superblock copy damaged at recovery", Meaning: "a superblock copy was torn or corrupt at open", Scenario: famCrash},
		{Name: "forward refused by the backup: no primary", Meaning: "a backup had no primary to forward a login to", Scenario: famBackups},
		{Name: "forward refused by the backup: no room", Meaning: "a backup's forwards were all in flight", Scenario: famBackups},
		{Name: "forward refused by the backup: a body the primary denies", Meaning: "a Register or Logout with a body reached a backup, which denied it as the primary would (InvalidCommand)", Scenario: famBad},
		{Name: "forward timed out", Meaning: "a forwarded login or logout got no result in time (57 to the client)", Scenario: famBackups},
		{Name: "forwarded logout committed", Meaning: "a forwarded logout committed at the primary", Scenario: famBackups},
		{Name: "forwarded logout not accepted: ", Meaning: "the primary answered a forwarded logout with a refusal", Scenario: famBackups, Prefix: true},
		{Name: "forwarded logout not committed: ", Meaning: "a forwarded logout's result was not a commit", Scenario: famBackups, Prefix: true},
		{Name: "forwarded logout of a gone session: no-op", Meaning: "a forwarded logout of a session already gone", Scenario: famBackups},
		{Name: "forwarded logout of a session this table does not hold: proposed", Meaning: "a forwarded logout the primary cannot prove gone (it may not have applied the Register): proposed, the commit a no-op if the session is gone (DEVIATIONS 69)", Scenario: famBackups},
		{Name: "forwarded logout proposed", Meaning: "the primary proposed a forwarded logout", Scenario: famBackups},
		{Name: "forwarded logout refused by the primary: ", Meaning: "the primary refused a forwarded logout", Scenario: famBackups, Prefix: true},
		{Name: "forwarded register committed", Meaning: "a forwarded login committed at the primary", Scenario: famBackups},
		{Name: "forwarded register not accepted: ", Meaning: "the backup heard a refusal of its forwarded login", Scenario: famBackups, Prefix: true},
		{Name: "forwarded register not committed: ", Meaning: "a forwarded login's result was not a commit", Scenario: famBackups, Prefix: true},
		{Name: "forwarded register of a client id another user owns", Meaning: "a forwarded login of an id bound to another user", Scenario: famBackups},
		{Name: "forwarded register proposed", Meaning: "the primary proposed a forwarded login", Scenario: famBackups},
		{Name: "forwarded register refused by the primary: ", Meaning: "the primary refused a forwarded login", Scenario: famBackups, Prefix: true},
		{Name: "forwarded register superseded before its result arrived", Meaning: "a client logged in again before its forwarded login's result came", Scenario: famBackups},
		{Name: "forwards canceled: primary lost its view", Meaning: "the primary left its view with forwards in flight (Canceled)", Scenario: famPartition},

		// The partition planes (replica/partitions.go).
		{Name: "partition plane: SendMessages dropped at admission: ", Meaning: "a send's routing prefix or batch broke a rule", Scenario: famSends, Prefix: true},
		{Name: "partition plane: SendMessages dropped: both queues full, or no stamp at the head", Meaning: "a partition primary could not take a send", Scenario: famSends},
		{Name: "partition plane: committed batches recovered from the segment log", Meaning: "a restart seeded a partition from its segment log", Scenario: famFlush},
		{Name: "partition plane: consumer offset applied leader-locally (NoAck)", Meaning: "a NoAck offset store applied at the primary", Scenario: famSends},
		{Name: "partition plane: consumer offset dropped: both queues full", Meaning: "a partition primary could not take an offset request", Scenario: famSends},
		{Name: "partition plane: consumer offset kept in memory only: the partition's records are full", Meaning: "a ninth consumer of one partition", Scenario: famSends},
		{Name: "partition plane: consumer offset record corrupt: lost", Meaning: "an offset record with no intact copy at a restart", Scenario: famStorage},
		{Name: "partition plane: consumer offset record torn: the intact copy kept", Meaning: "an offset record with one damaged copy at a restart", Scenario: famCrash},
		{Name: "partition plane: consumer offsets recovered from their records", Meaning: "a restart seeded a partition's offsets from their records", Scenario: famCrash},
		{Name: "partition plane: frame for an unknown group dropped", Meaning: "a consensus frame of a group not (or no longer) built here", Scenario: famSends},
		{Name: "partition plane: group dropped: its partition was deleted", Meaning: "a delete committed and the group went", Scenario: famAny},
		{Name: "partition plane: group not built: every superblock slot is taken", Meaning: "no free partition slot (DEVIATIONS 54 should prevent it)", Scenario: famLong},
		{Name: "partition plane: group not rebuilt: its slot was reused, so it was deleted", Meaning: "replay met a group whose slot a later group took", Scenario: famCrash},
		{Name: "partition plane: group rebuilt from its superblock", Meaning: "a restart rebuilt a group from its superblock slot", Scenario: famCrash},
		{Name: "partition plane: journal purged of flushed ops beyond the evicted ring", Meaning: "a flush let a group's memory journal purge old ops", Scenario: famRing},
		{Name: "partition plane: request refused: the metadata plane is replaying what it applied before its restart", Meaning: "a restarted replica refused a partition request until its metadata caught up with its recovered head", Scenario: famCrash},
		{Name: "partition state transfer started", Meaning: "a partition group's repair met RangeEvicted: it asked the group's primary for the partition's state", Scenario: famRing},
		{Name: "partition state transfer waits: four are under way", Meaning: "a fifth partition group needing a transfer waited for a place", Scenario: famRing},
		{Name: "partition state transfer no longer needed: the group caught up while it waited", Meaning: "a waiting group caught up by repair before its turn", Scenario: famRing},
		{Name: "partition state transfer offered", Meaning: "a caught-up primary offered a partition's segments and consumer offsets", Scenario: famRing},
		{Name: "partition state transfer refused: nothing to offer right now", Meaning: "a replica not Normal in the group, with nothing committed or a segment it has not applied yet, refused (transient)", Scenario: famRing},
		{Name: "partition state transfer refused: the server cannot offer right now", Meaning: "a receiver's session met a transient refusal", Scenario: famRing},
		{Name: "partition state transfer refused", Meaning: "a receiver's session met an offer it could not use", Scenario: famRing},
		{Name: "partition state transfer started over with another replica", Meaning: "a refused or failed partition session moved to the next peer", Scenario: famRing},
		{Name: "partition state transfer gave up: every peer refused or failed", Meaning: "no peer offered; the next RangeEvicted starts over", Scenario: famRing},
		{Name: "partition state transfer retried: a request went unanswered", Meaning: "a partition state-transfer request stalled and was sent again", Scenario: famRing},
		{Name: "partition state transfer retried: an artifact failed its checksum", Meaning: "a pulled partition artifact failed its manifest checksum (a StateChunk corrupted in flight) and is pulled again", Scenario: famWire},
		{Name: "partition state transfer retried: the offer expired", Meaning: "the server no longer knew the partition session's nonce", Scenario: famRing},
		{Name: "partition state transfer failed: its retries are used up", Meaning: "a partition session ran out of stall or checksum retries", Scenario: famRing},
		{Name: "partition state transfer failed: an artifact does not decode", Meaning: "verified partition artifacts did not decode (a bug on one side)", Scenario: famFaults},
		{Name: "partition state transfer no longer needed: the group caught up", Meaning: "the group applied the offered op by itself before the install", Scenario: famRing},
		{Name: "partition state transfer completed", Meaning: "a partition group installed the state a transfer brought", Scenario: famRing},
		{Name: "partition state transfer: the segment log held a replaced batch and is written again", Meaning: "an install over a segment log that diverged (beyond the memory-loss bound)", Scenario: famBeyond},
		{Name: "partition state transfer: the segment log already holds batches above the installed op", Meaning: "an install below what the receiver's segment log kept: the log stays, its tail waits to be committed again", Scenario: famRing},
		{Name: "partition state transfer: a crash landed during the install", Meaning: "a replica crashed with a partition install's superblock write in flight", Scenario: famRing},
		{Name: "partition plane: request of a session ahead of the table dropped", Meaning: "a partition request named a session this replica has not committed yet", Scenario: famBackups},
		{Name: "partition plane: segment log ends in a damaged unit: written again from there", Meaning: "a restart found a torn or corrupt flush unit", Scenario: famStorage},
		{Name: "partition plane: segment log full: batches kept in memory", Meaning: "a partition's segment log ran out of room", Scenario: famLong},
		{Name: "partition plane: segment log held a batch the log replaced: written again from offset 0", Meaning: "a segment held a batch the committed log replaced", Scenario: famBeyond},

		// The harness (sim/).
		{Name: "crash deferred: the memory-loss bound", Meaning: "a crash would have exceeded the memory-loss bound and waited", Scenario: famCrash},
		{Name: "crash deferred: fired once the memory-loss bound allowed it", Meaning: "a crash the memory-loss bound deferred fired at the first tick the bound allowed", Scenario: famCrash},
		{Name: "liveness: froze replicas before every partition group caught up", Meaning: "the liveness phase's catch-up wait ran out of budget", Scenario: famCrash},
		{Name: "liveness: requests left to the phase", Meaning: "the safety phase ended with requests not yet answered: each adds to the liveness budget (livenessBudgetTicks)", Scenario: famAny},
		{Name: "liveness: lifted the requests a head round held", Meaning: "the liveness phase began while a head round of the view-change fault nemesis held the client requests bound for its replacer, and lifted the filter (no heal does)", Scenario: famVCFaults},
		{Name: "liveness: the core changed view after it converged", Meaning: "a view change after the core first converged", Scenario: famPartition},
		{Name: "memory lost beyond the bound", Meaning: "more than f replicas were without partition memory at once", Scenario: famBeyond},
		{Name: "workload: request indefinite", Meaning: "a request ended without a known outcome", Scenario: famTable},
		{Name: "workload: session evicted", Meaning: "a client's session was evicted", Scenario: famTable},
		{Name: "workload: request sent where its route was last admitted", Meaning: "a client moved its connection to the replica that last admitted the request's route (workload routes.go)", Scenario: famAny},
		{Name: "workload: transient refusal", Meaning: "a client's request was answered TransientNotAccepted or TransientNotCommitted", Scenario: famAny},
		{Name: "workload: request timed out", Meaning: "a client's request got no answer within the client timeout and went to the next replica", Scenario: famAny},
		{Name: "rollback: a backup committed over a replaced op cut from its primary", Meaning: "the nemesis reached a backup committed over a replaced op", Scenario: famRollback},
		{Name: "rollback: a lagging backup cut off with it", Meaning: "the nemesis cut a lagging backup with the old primary", Scenario: famRollback},
		{Name: "rollback: a replica of the new view leads the joined side", Meaning: "the joined side is led from the new view", Scenario: famRollback},
		{Name: "rollback: old primary cut off", Meaning: "the nemesis cut the old primary off", Scenario: famRollback},
		{Name: "rollback: old primary joined with a backup committed over its replaced op", Meaning: "the nemesis joined the old primary with such a backup", Scenario: famRollback},
		{Name: "rollback: the aimed leader leads", Meaning: "the nemesis's aimed leader led the joined side", Scenario: famRollback},
		{Name: "rollback: the lagging backup leads the joined side", Meaning: "the lagging backup led the joined side", Scenario: famRollback},
		{Name: "rollback: the old primary leads the joined side", Meaning: "the old primary led the joined side", Scenario: famRollback},
		{Name: "rollback: round abandoned before a replaced op was committed over", Meaning: "a nemesis round timed out at its cut", Scenario: famRollback},
		{Name: "rollback: round abandoned: the aimed leader's turn did not come", Meaning: "a nemesis round timed out at its aim", Scenario: famRollback},
		{Name: "rollback: round abandoned: no view among the joined side", Meaning: "a nemesis round timed out at its bridge", Scenario: famRollback},
		{Name: "stale answer: a probe's StartView held at its sender", Meaning: "the stale-answer nemesis held a StartView answering a probe", Scenario: famStale},
		{Name: "stale answer: an earlier incarnation's StartView sent on the new connection", Meaning: "the held StartView went to the addressee's next incarnation", Scenario: famStale},
		{Name: "stale answer: the sender crashed after the delivery", Meaning: "the held answer's sender crashed right after it went out, so that a view change follows", Scenario: famStale},
		{Name: "stale answer: round abandoned", Meaning: "a stale-answer round timed out or met a view change or a crash", Scenario: famStale},
		{Name: "stale answer: target crashed", Meaning: "the stale-answer nemesis crashed a Normal backup", Scenario: famStale},
		{Name: "stale answer: target crashed past the held answer", Meaning: "the target, Normal above the held answer's op, crashed again", Scenario: famStale},
		{Name: "view-change faults: primary crashed with its own head ops damaged", Meaning: "the view-change fault nemesis crashed a primary whose head ops no backup received, their slots damaged", Scenario: famVCFaults},
		{Name: "view-change faults: a reconcile's write of a struck op misdirected", Meaning: "the struck primary adopted a log, and its header write of one of the struck ops (forgetting it, or recording the op that replaced it) was misdirected", Scenario: famVCFaults},
		{Name: "view-change faults: crashed over a misdirected write", Meaning: "the replica crashed after that reconcile, split off from the primary with too few replicas to elect without it (or with the primary crashed too), so that its restart meets a view change with the half-old slot", Scenario: famVCFaults},
		{Name: "view-change faults: round abandoned", Meaning: "no head op of the primary's own came within the round, or no backup of the rest's view held the stale backups' op", Scenario: famVCFaults},
		{Name: "view-change faults: the rest prepared over the struck ops", Meaning: "a replace round's rest elected without the struck primary and prepared ops at the struck ops' numbers", Scenario: famVCFaults},
		{Name: "view-change faults: a short round's adopted head damaged, the short backups joined", Meaning: "a short replace round's struck replica, reconciled over the struck ops it never acknowledged, had its adopted head's slot damaged whole as it crashed, and was split off with backups whose logs end below the struck ops", Scenario: famVCFaults},
		{Name: "view-change faults: a canonical voter lost an op a lower log_view holds", Meaning: "a lower-log_view round damaged, on a backup of the view the stale backups missed, the slot of the op they hold, and split it with them", Scenario: famVCFaults},
		{Name: "bad frames: injected, breaking ", Meaning: "the bad-frames nemesis handed a replica a sealed frame that breaks that receiver rule of wire.md", Scenario: famBadFrames, Prefix: true},
		{Name: "bad frames: void frame injected: ", Meaning: "the bad-frames nemesis handed a replica a frame valid on the wire and void by the protocol (a stale view, an op beyond its head or pipeline, a group it does not run, a chunk request of an offer never made)", Scenario: famBadFrames, Prefix: true},
		{Name: "bad frames: the connection was gone", Meaning: "the connection a bad frame was injected on had been replaced since the receiver last read on it", Scenario: famBadFrames},
		{Name: "bad frames: no established connection to inject on", Meaning: "no replica had read a frame from a peer on a connection still established", Scenario: famBadFrames},
		{Name: "bad frames: impostor armed: ", Meaning: "the bad-frames nemesis armed a handshake substitution of that kind", Scenario: famBadFrames, Prefix: true},
		{Name: "bad frames: impostor sent ", Meaning: "an impostor's handshake frame of that kind went out in place of a replica's", Scenario: famBadFrames, Prefix: true},
		{Name: "bad frames: impostor round expired", Meaning: "no handshake of the armed step came within the round", Scenario: famBadFrames},
		{Name: "bad frames: impostor reset a connection to get a handshake", Meaning: "an armed round reset an established connection so that a handshake would come", Scenario: famBadFrames},
		{Name: "fault: ", Meaning: "a fault class occurred in the run (crash, partition by mode, reset by cause, storage faults, clock skew)", Scenario: famFaults, Prefix: true},
	}
	sort.Slice(p, func(i, j int) bool { return p[i].Name < p[j].Name })
	return p
}

// declaredProbe returns the catalogue entry a fired probe name counts
// for: its own, or, for a partition group's consensus probe, the plain
// name's.
func declaredProbe(catalogue []Probe, name string) (Probe, bool) {
	for _, n := range []string{name, strings.TrimPrefix(name, partitionPlanePrefix)} {
		for _, d := range catalogue {
			if d.Name == n || d.Prefix && strings.HasPrefix(n, d.Name) {
				return d, true
			}
		}
	}
	return Probe{}, false
}

// NeverFired returns the declared probes that no name in fired counts for
// (canary probes, "canary: ...", are not coverage probes and are skipped).
func NeverFired(fired map[string]int) []Probe {
	catalogue := ProbeCatalogue()
	hit := map[string]bool{}
	for name, n := range fired {
		if n == 0 {
			continue
		}
		if d, ok := declaredProbe(catalogue, name); ok {
			hit[d.Name] = true
		}
	}
	var out []Probe
	for _, d := range catalogue {
		if !hit[d.Name] {
			out = append(out, d)
		}
	}
	return out
}
