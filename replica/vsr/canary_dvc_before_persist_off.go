//go:build !canary_dvc_before_persist

package vsr

// canaryDVCBeforePersist is the canary canary_dvc_before_persist, off (see
// canary_dvc_before_persist_on.go): the normal build.
const canaryDVCBeforePersist = false
