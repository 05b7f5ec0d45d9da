//go:build canary_topic_name_global

package bug

// TopicNameGlobal is the switch of canary_topic_name_global (canary/README.md): on in this build.
const TopicNameGlobal = true
