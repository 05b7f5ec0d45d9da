//go:build canary_ack_before_sync

package vsr

// canaryAckBeforeSync turns on the canary canary_ack_before_sync: a replica
// acknowledges a prepare (PrepareOk, or the primary's own ack) as soon as it
// hands it to the journal, before the journal's done says it is durable. A
// deliberate bug for the canary suite (canary/README.md); false in a normal
// build.
const canaryAckBeforeSync = true
