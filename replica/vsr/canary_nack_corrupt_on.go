//go:build canary_nack_corrupt

package vsr

// canaryNackCorrupt turns on the canary canary_nack_corrupt: buildVote nacks
// an op its journal cannot read (KnowledgeNone reported as KnowledgeNever).
// A deliberate bug for the canary suite (canary/README.md); false in a
// normal build.
const canaryNackCorrupt = true
