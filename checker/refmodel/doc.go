// Package refmodel is an independent reference model of vopr's metadata
// state machine, written from the specification
// (../../../shared/spec/client-ops.md; section numbers in comments refer to
// it) and from the decisions listed in replica/metadata's package
// documentation, sharing no code with replica/metadata or replica/clients.
//
// The checker judges every committed metadata op by the reply a correct
// replica must have sent. Deriving that reply from the replica's own state
// machine would make a bug in the replica's apply invisible: the expected
// reply would change with it. This package decodes request and replicated
// bodies, decides the primary's refusals before consensus (Admit), builds the
// replicated body a correct primary proposes (Project), compares a committed
// body with a client's request (SameRequest), applies committed prepares
// (Model.Apply) and builds the reply frame a replica caches (Reply), each
// from the text of the specification alone. Only the frame layouts come from
// package wire.
//
// The model covers exactly the operations the replica implements: Register
// (1) and Logout (3), whose committed reply body is empty; CreateStream
// (128), UpdateStream (129), DeleteStream (130), CreateTopic (132, committed
// as CreateTopicWithAssignments 64), DeleteTopic (134), CreatePartitions
// (136, committed as CreatePartitionsWithAssignments 65) and DeletePartitions
// (137).
//
// Where the specification leaves a choice, the model follows vopr's decision
// (replica/metadata doc.go, DEVIATIONS.md): undecodable bodies are denied
// with InvalidCommand before consensus, internal operations are evicted,
// operations outside the slice are denied with FeatureUnavailable, more than
// 1000 partitions in one request is denied with TooManyPartitions, CreateTopic
// options are checked only by the projection (an eviction
// InvalidRequestBody), a byte size written as text must be a plain number or
// one of Iggy's keywords, only root (user 0) is authorized, consensus group
// ids are never reused (DEVIATIONS 15), an UpdateStream whose patched options
// no longer fit one block commits InvalidOptionValue (DEVIATIONS 16), and a
// ceiling on live partitions commits TooManyPartitions (DEVIATIONS 54).
// Where even those are silent, the model follows Iggy at the revision the
// specification was written from: how committed option blocks are read (an
// entry of a kind with no meaning is skipped, a fixed-size kind of another
// length is unreadable) and the text forms of option values, humantime
// 2.4.0's durations among them. No document places the live-partition
// ceiling among the committed rejections of CreateTopic and
// CreatePartitions; the model checks it where the replica does, after
// TooManyTopics and before the partition ids.
package refmodel
