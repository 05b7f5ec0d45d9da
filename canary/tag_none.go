//go:build !canary_commit_one_ack && !canary_ack_before_sync && !canary_dvc_before_persist && !canary_retry_applied_twice && !canary_torn_trusted && !canary_nack_corrupt && !canary_apply_unchecked && !canary_truncate_without_quorum && !canary_repair_unchained && !canary_chain_unchecked && !canary_vote_drops_tail && !canary_delete_keeps_name && !canary_rename_keeps_old_name && !canary_topic_name_global && !canary_stale_startview_accepted && !canary_heartbeat_reset && !canary_partition_reply_before_commit && !canary_poll_uncommitted && !canary_amnesia_votes && !canary_offset_at_prepare && !canary_segment_lost_flush && !canary_no_restamp && !canary_install_unchecked && !canary_checkpoint_at_commit_max && !canary_slots_reused_early

package canary

// Tag is the canary this build turns on: none.
const Tag = ""
