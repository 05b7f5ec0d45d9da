//go:build canary_dvc_before_persist

package vsr

// canaryDVCBeforePersist turns on the canary canary_dvc_before_persist: a
// replica sends its DoViewChange before its new view is durable (the
// stateDurable gate is skipped for the vote). A deliberate bug for the
// canary suite (canary/README.md); false in a normal build.
const canaryDVCBeforePersist = true
