//go:build !canary_dvc_before_persist

package bug

// DVCBeforePersist is the switch of canary_dvc_before_persist (canary/README.md): off, as in every build
// without its tag.
const DVCBeforePersist = false
