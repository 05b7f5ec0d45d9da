#!/bin/sh
# run.sh: the canary suite's runner (canary/README.md). For every canary, a
# build with its tag must fail a campaign of swarm seeds 1..SEEDS (default
# 4000) with the exit status and a violation the canary expects; the runner
# prints, per canary, the first failing seed (seeds-to-catch) and the
# violation, and exits 1 if any canary escaped or was caught as something
# else.
#
#   canary/run.sh [-go] [tag ...]
#
# By default each canary runs through the vopr command:
#   go build -tags TAG -o bin/vopr-TAG ./cmd/vopr
#   bin/vopr-TAG -seed 1 -seeds SEEDS -parallel $(nproc)
# (vopr stops at the first failing seed). With -go it runs the fallback Go
# driver instead: go test -tags TAG ./canary (canary_test.go), which needs
# only package sim. Environment: SEEDS (default 4000), PARALLEL (default
# nproc), GO (default go).
set -u
cd "$(dirname "$0")/.."

# The suite: tag, the exit status a campaign must end with (129 correctness,
# 128 liveness; 129|128 for a correctness canary that may first show as a stall),
# and the violation it must report (prefixes, '|' between).
# canary_test.go checks that this table and suite.go agree.
CANARIES='
canary_commit_one_ack           129 committed op replaced|divergent commit|non-linearizable reply|hash chain break|replica panic
canary_ack_before_sync          129 acknowledged before durable|acknowledged another prepare
canary_dvc_before_persist       129 sent before durable
canary_retry_applied_twice      129 duplicate apply|non-linearizable reply
canary_torn_trusted             129 journal recovery misread the disk|corrupt body applied|frame off the wire format|replica panic
canary_nack_corrupt             129 nack of an acknowledged op
canary_apply_unchecked          129 committed op replaced|divergent commit|hash chain break|replica panic
canary_truncate_without_quorum  129 committed op lost|committed op replaced|divergent commit|non-linearizable reply|replica panic
canary_repair_unchained         129 committed op replaced|divergent commit|hash chain break|replica panic
canary_chain_unchecked          129 committed op replaced|divergent commit|hash chain break|replica panic
canary_vote_drops_tail          129 nack of an acknowledged op|log_view without its log|committed op lost|committed op replaced|divergent commit|replica panic
canary_delete_keeps_name        129 reply differs from the model|non-linearizable reply
canary_rename_keeps_old_name    129 reply differs from the model|answer differs from the model|request routed to another partition|non-linearizable reply
canary_topic_name_global        129 reply differs from the model|non-linearizable reply
canary_stale_startview_accepted 129 acknowledged op truncated|nack of an acknowledged op|committed op lost|committed op replaced|divergent commit
canary_heartbeat_reset          128 the core kept changing views after it converged
canary_partition_reply_before_commit 129 lost write
canary_poll_uncommitted         129 G1a aborted read|inconsistent offsets
canary_amnesia_votes            129|128 log_view without its log|replica panic|committed op lost|committed op replaced|divergent commit|lost write|inconsistent offsets|the core did not converge
canary_offset_at_prepare        129 poll skip|installed state differs from the model
canary_segment_lost_flush       129 segment log incomplete
canary_no_restamp               128 a prepare not retransmitted to a backup that has not acknowledged it|the core did not converge
canary_install_unchecked        129 transferred artifact does not decode|checkpoints differ|non-linearizable reply|divergent commit|replica panic
canary_checkpoint_at_commit_max 129 checkpoint labelled with another op|checkpoint of an op not applied|checkpoints differ|replica panic
canary_slots_reused_early       129 journal slot reused early|committed op lost
'

GO=${GO:-go}
SEEDS=${SEEDS:-4000}
PARALLEL=${PARALLEL:-$(nproc)}
mode=vopr
if [ "${1:-}" = "-go" ]; then
	mode=go
	shift
fi
only="$*"

logdir=bin/canary
mkdir -p "$logdir"
failed=0
report=""

# matches VIOLATION PREFIXES: whether the violation starts with one of the
# '|'-separated prefixes.
matches() {
	v=$1
	rest=$2
	while [ -n "$rest" ]; do
		p=${rest%%|*}
		case "$v" in "$p"*) return 0 ;; esac
		[ "$p" = "$rest" ] && break
		rest=${rest#*|}
	done
	return 1
}

echo "$CANARIES" | while read -r tag want expect; do
	[ -n "$tag" ] || continue
	echo "$tag $want $expect"
done >"$logdir/suite.txt"

while read -r tag want expect; do
	if [ -n "$only" ] && ! echo " $only " | grep -q " $tag "; then
		continue
	fi
	log=$logdir/$tag.log
	if [ $mode = vopr ]; then
		if ! $GO build -tags "$tag" -o "bin/vopr-$tag" ./cmd/vopr; then
			echo "canary $tag: BUILD FAILED"
			failed=1
			report="$report$tag build-failed\n"
			continue
		fi
		"bin/vopr-$tag" -seed 1 -seeds "$SEEDS" -parallel "$PARALLEL" >"$log" 2>"$log.stderr"
		rc=$?
		seed=$(sed -n 's/^seed=\([0-9]*\) result=\(correctness\|liveness\|error\) .*/\1/p' "$log" | head -n 1)
		violation=$(sed -n 's/^\(violation\|error\): //p' "$log" | head -n 1)
	else
		$GO test -count=1 -tags "$tag" ./canary -run '^TestCanary$' -v -timeout 60m \
			-canary.seeds "$SEEDS" -canary.parallel "$PARALLEL" >"$log" 2>&1
		seed=$(sed -n 's/.* caught: seeds-to-catch=\([0-9]*\) .*/\1/p' "$log" | head -n 1)
		violation=$(sed -n 's/.* caught: seeds-to-catch=[0-9]* result=[a-z]* violation: //p' "$log" | head -n 1)
		case $(sed -n 's/.* caught: seeds-to-catch=[0-9]* result=\([a-z]*\) .*/\1/p' "$log" | head -n 1) in
		correctness) rc=129 ;;
		liveness) rc=128 ;;
		error) rc=1 ;;
		*) rc=0 ;;
		esac
	fi
	if [ -z "$seed" ]; then
		# How many seeds exercised the bug at all: the "canary: ..." probe
		# (sites in replica/vsr report one), from vopr's probe table or the
		# Go driver's log.
		fired=$(awk '/^  canary: / { n += $(NF-1) } END { print n + 0 }' "$log")
		if [ $mode = go ]; then
			fired=$(sed -n 's/.*the bug path fired (a "canary:" probe) in \([0-9]*\) of.*/\1/p' "$log" | head -n 1)
		fi
		echo "canary $tag: ESCAPED: no seed in 1..$SEEDS failed (exit $rc; want exit $want: $expect); the bug's probe fired in ${fired:-0} seeds; log $log"
		failed=1
		report="$report$tag ESCAPED\n"
	elif ! matches "$rc" "$want" || ! matches "$violation" "$expect"; then
		echo "canary $tag: WRONG CATCH at seed $seed (exit $rc, want $want: $expect): $violation"
		failed=1
		report="$report$tag wrong-catch seed=$seed\n"
	else
		echo "canary $tag: caught seeds-to-catch=$seed exit=$rc violation: $violation"
		report="$report$tag caught seed=$seed\n"
		# A client-visible failure (a reply the model in canonical order
		# does not give) must be one porcupine finds too (issue 12 item 6):
		# the failing seeds from this one on run again with the clients'
		# metadata history given to porcupine under the checker's reference
		# model, until one is illegal, at most 5 of them. The checker is
		# stricter than porcupine (it requires the committed order itself to
		# explain every reply, porcupine any order), so a seed may fail the
		# checker and be linearizable; the bug must still show to porcupine.
		case "$violation" in
		"non-linearizable reply"*)
			tried=0
			agreed=""
			next=$seed
			while [ $tried -lt 5 ] && [ -z "$agreed" ]; do
				if [ $mode = vopr ]; then
					line=$("bin/vopr-$tag" -seed "$next" -seeds "$SEEDS" -parallel "$PARALLEL" -porcupine 2>/dev/null |
						grep '^seed=[0-9]* result=correctness .*porcupine=' | head -n 1)
				else
					line=$($GO test -count=1 -tags "$tag" ./canary -run '^TestCanaryPorcupine$' -v -canary.seed "$next" 2>&1 |
						sed -n 's/.*canary porcupine: \(seed=.*\)/\1/p' | head -n 1)
				fi
				[ -n "$line" ] || break
				tried=$((tried + 1))
				s=$(echo "$line" | sed -n 's/^seed=\([0-9]*\) .*/\1/p')
				case "$line" in *porcupine=illegal*) agreed=$s ;; esac
				next=$((s + 1))
			done
			if [ -n "$agreed" ]; then
				echo "canary $tag: porcupine agrees at seed $agreed: not linearizable ($tried of the failing seeds from $seed tried)"
			else
				echo "canary $tag: PORCUPINE NEVER AGREES: $tried failing seeds from $seed, none illegal to porcupine"
				failed=1
				report="$report$tag porcupine-disagrees seed=$seed\n"
			fi
			;;
		esac
	fi
done <"$logdir/suite.txt"

echo "canary suite ($mode, seeds 1..$SEEDS):"
printf "$report" | sed 's/^/  /'
if [ $failed -ne 0 ]; then
	echo "canary suite: FAILED (a canary escaped or was caught as something else)"
	exit 1
fi
echo "canary suite: every canary caught"
