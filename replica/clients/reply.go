package clients

import "github.com/iggy-vopr/vopr/replica/wire"

// BuildReply builds the committed Reply frame of a metadata prepare with the
// given reply body (wire.md 5.20): cluster, release, replica, client, op,
// timestamp, request, operation and request_checksum are copied from the
// prepare, commit = prepare.Op, context and status are 0. The operation is
// the prepare's, so CreateTopic and CreatePartitions replies carry 64 and 65
// (client-ops.md 2.3). These are the bytes every replica caches in its client
// table and the bytes a replay resends; they are a pure function of the
// prepare's identity-covered fields and body.
//
// The view is 0, not the prepare's (DEVIATIONS.md): a retransmitted prepare
// is re-stamped with the retransmitting primary's view (the identity
// excludes view), so copying it would make replicas that received different
// transmissions cache different bytes.
func BuildReply(prepare wire.PrepareHeader, body []byte) []byte {
	if prepare.Client.IsZero() {
		panic("clients: BuildReply for a prepare without a client")
	}
	h := wire.ReplyHeader{
		Prefix: wire.Prefix{
			Cluster: prepare.Cluster,
			Release: prepare.Release,
			Replica: prepare.Replica,
		},
		RequestChecksum: prepare.RequestChecksum,
		Client:          prepare.Client,
		Op:              prepare.Op,
		Commit:          prepare.Op,
		Timestamp:       prepare.Timestamp,
		Request:         prepare.Request,
		Operation:       prepare.Operation,
	}
	return wire.BuildFrame(&h, body)
}
