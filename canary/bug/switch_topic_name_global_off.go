//go:build !canary_topic_name_global

package bug

// TopicNameGlobal is the switch of canary_topic_name_global (canary/README.md): off, as in every build
// without its tag.
const TopicNameGlobal = false
