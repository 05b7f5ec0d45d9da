#!/bin/sh
# shrink-canaries.sh: shrink every canary's first failing seed (make
# shrink-canaries; not part of make test). For each canary of
# canary/run.sh's table (or the tags given), it builds bin/vopr-TAG, finds
# the first failing seed (from the canary suite's log bin/canary/TAG.log
# when make canary left one, else a campaign of seeds 1..SEEDS), runs
# `vopr shrink` on it within BUDGET, and checks that the shrunk run, replayed
# from its plan file alone (`vopr -plan FILE`), fails with the same exit
# status and violation name and is smaller (fewer firings or events). Then
# it sweeps the shrunk run with `vopr branch -sweep` (BRANCHES branches a
# point) and prints the moment its failure became inevitable.
# Environment: SEEDS (default 4000), BUDGET (default 2m), PARALLEL (default
# nproc), BRANCHES (default 16), GO (default go). Outputs under bin/shrink/:
# TAG.plan (the shrunk plan), TAG.txt (the shrink), TAG.replay, TAG.sweep
# and TAG.sweep.json (the sweep; vopr timeline -likelihood plots it).
set -u
cd "$(dirname "$0")/.."
GO=${GO:-go}
SEEDS=${SEEDS:-4000}
BUDGET=${BUDGET:-2m}
PARALLEL=${PARALLEL:-$(nproc)}
BRANCHES=${BRANCHES:-16}
out=bin/shrink
mkdir -p "$out"
tags="$*"
if [ -z "$tags" ]; then
	tags=$(sed -n "/^CANARIES='/,/^'/p" canary/run.sh | sed -n 's/^\(canary_[a-z_]*\) .*/\1/p')
fi
failed=0
for tag in $tags; do
	bin=bin/vopr-$tag
	if ! $GO build -tags "$tag" -o "$bin" ./cmd/vopr; then
		echo "shrink $tag: BUILD FAILED"
		failed=1
		continue
	fi
	log=bin/canary/$tag.log
	seed=""
	if [ -f "$log" ]; then
		seed=$(sed -n 's/^seed=\([0-9]*\) result=\(correctness\|liveness\|error\) .*/\1/p' "$log" | head -n 1)
	fi
	if [ -z "$seed" ]; then
		"$bin" -seed 1 -seeds "$SEEDS" -parallel "$PARALLEL" >"$out/$tag.campaign" 2>/dev/null
		seed=$(sed -n 's/^seed=\([0-9]*\) result=\(correctness\|liveness\|error\) .*/\1/p' "$out/$tag.campaign" | head -n 1)
	fi
	if [ -z "$seed" ]; then
		echo "shrink $tag: no failing seed in 1..$SEEDS"
		failed=1
		continue
	fi
	"$bin" -seed "$seed" >"$out/$tag.original" 2>&1
	want_rc=$?
	"$bin" shrink -seed "$seed" -budget "$BUDGET" -parallel "$PARALLEL" -o "$out/$tag.plan" >"$out/$tag.txt" 2>&1
	rc=$?
	name=$(sed -n 's/^shrink: fails [a-z]*: //p' "$out/$tag.txt")
	if [ $rc -ne 0 ] || [ -z "$name" ]; then
		echo "shrink $tag: seed $seed: vopr shrink exited $rc; see $out/$tag.txt"
		failed=1
		continue
	fi
	"$bin" -plan "$out/$tag.plan" >"$out/$tag.replay" 2>&1
	got_rc=$?
	violation=$(sed -n 's/^\(violation\|error\): //p' "$out/$tag.replay" | head -n 1)
	orig_f=$(sed -n 's/^shrink: original .*firings=\([0-9]*\) .*/\1/p' "$out/$tag.txt")
	min_f=$(sed -n 's/^shrink: minimal .*firings=\([0-9]*\) .*/\1/p' "$out/$tag.txt")
	orig_e=$(sed -n 's/^shrink: original .*events=\([0-9]*\) .*/\1/p' "$out/$tag.txt")
	min_e=$(sed -n 's/^shrink: minimal .*events=\([0-9]*\) .*/\1/p' "$out/$tag.txt")
	summary=$(sed -n 's/^shrink: \(firings .*\)/\1/p' "$out/$tag.txt")
	case "$violation" in
	"$name"*) same=yes ;;
	*) same=no ;;
	esac
	if [ "$got_rc" -ne "$want_rc" ] || [ $same = no ]; then
		echo "shrink $tag: seed $seed: the shrunk run does not fail the same way (exit $got_rc, want $want_rc; \"$violation\", want \"$name\")"
		failed=1
	elif [ "$min_f" -ge "$orig_f" ] && [ "$min_e" -ge "$orig_e" ]; then
		echo "shrink $tag: seed $seed: not smaller: $summary"
		failed=1
	else
		echo "shrink $tag: seed $seed: $name: $summary"
		# Where the shrunk run's failure became inevitable: a sweep of
		# branches over its plan (vopr branch -sweep).
		"$bin" branch -sweep -branches "$BRANCHES" -parallel "$PARALLEL" -plan "$out/$tag.plan" \
			-o "$out/$tag.sweep.json" >"$out/$tag.sweep" 2>&1
		rc=$?
		inevitable=$(sed -n 's/^sweep: \(inevitable .*\)/\1/p' "$out/$tag.sweep")
		if [ $rc -ne 0 ] || [ -z "$inevitable" ]; then
			echo "shrink $tag: seed $seed: vopr branch -sweep exited $rc without a verdict; see $out/$tag.sweep"
			failed=1
		else
			echo "  sweep: $inevitable"
		fi
	fi
done
exit $failed
