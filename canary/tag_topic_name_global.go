//go:build canary_topic_name_global

package canary

// Tag is the canary this build turns on.
const Tag = "canary_topic_name_global"
