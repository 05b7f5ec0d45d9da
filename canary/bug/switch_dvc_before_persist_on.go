//go:build canary_dvc_before_persist

package bug

// DVCBeforePersist is the switch of canary_dvc_before_persist (canary/README.md): on in this build.
const DVCBeforePersist = true
