#!/bin/sh
# nightly.sh: the nightly job, and its scheduler's entry point (make nightly
# calls it too, but make turns every failure into its own exit status 2, so
# a scheduler that must tell a found bug from a broken job runs this script).
#
#   scripts/nightly.sh [-h]
#
# Runs, into OUT/<UTC start time>/:
#   1. a swarm campaign for nine tenths of DURATION on PARALLEL cores:
#      vopr -duration D -parallel P -keep-going -json   (swarm.jsonl, swarm.txt)
#   2. every long-run regression seed (SEEDS_DIR/*.seed with test: vopr-long),
#      one after another, with the flags its file gives:
#      vopr -seed N FLAGS -json              (replay-FILE.jsonl, replay-FILE.txt)
#   3. long runs from a random first seed for what is left of the last tenth
#      (1 s at least, so that PARALLEL long runs start every night):
#      vopr -long -duration D -parallel P -keep-going -json   (long.jsonl, long.txt)
#   4. every failing seed of the three again, with its event trace and its
#      timeline (vopr timeline -o ... -trace ...): failure-SEED.txt (its
#      whole output), trace-SEED.jsonl and timeline-SEED.html.
#   5. a mutant sample, after DURATION (on shard 0 alone; issue 26): MUTANTS
#      mutants of the replica, the sample's seed the UTC date (YYYYMMDD),
#      each against 100 VOPR seeds and its package's unit tests:
#      vopr mutants -seed DATE -n MUTANTS -parallel P -o mutants.jsonl
#      (mutants.txt: the table, with the VOPR's recall), and survivors.jsonl,
#      the lines of the mutants that built and the VOPR did not kill.
# and writes status.txt (the exit status, alone) and nightly.txt (status,
# start and end times in UTC, DURATION and PARALLEL, the output of vopr
# -version, and per stage its flags, exit status, seeds and seeds per
# second). Wall time is fine here: these are the job's records, not vopr's
# deterministic output.
#
# Exit status: the worst of its campaigns, 129 (correctness) > 128
# (liveness) > 1 (simulator error, or a vopr that did not run) > 0; 2 only
# for its own usage errors (a bad argument or DURATION); 130 when SIGINT or
# SIGTERM stopped it before a failure was found (the running vopr gets the
# signal, prints its table and exits; later stages are skipped).
#
# Environment: DURATION (default 1h; h, m and s units as in 1h30m, 10m or
# 90s; at least 10s), PARALLEL (default nproc), VOPR (default bin/vopr),
# OUT (default nightly), SEEDS_DIR (default seeds), SEED (the first seed
# of the swarm and long campaigns, passed as -seed; random when unset),
# SHARD (i/n with 0 <= i < n: this machine's shard of a nightly job run on
# n machines, passed as -shard to the swarm and long campaigns, which then
# need SEED, the same on every machine; of the long-run regression seeds,
# the k-th in file order runs on shard k mod n). Unset, the job is the
# whole campaign. vopr report merges the shards' swarm.jsonl (and their
# long.jsonl) into one table. MUTANTS (default 100; 0: no mutant stage).
# The mutant stage needs the vopr source tree (the current directory) and
# go; its survivors are not failures (the status stays the campaigns'),
# but a vopr mutants that cannot run (exit 1 or 2) makes the status 1.
set -u

usage() {
	sed -n '2,/^$/s/^# \{0,1\}//p' "$0"
}

die_usage() {
	echo "nightly: $1" >&2
	usage >&2
	exit 2
}

case $# in
0) ;;
*)
	case $1 in
	-h | -help | --help)
		usage
		exit 0
		;;
	*) die_usage "unexpected argument '$1'" ;;
	esac
	;;
esac

DURATION=${DURATION:-1h}
PARALLEL=${PARALLEL:-$(nproc)}
VOPR=${VOPR:-bin/vopr}
OUT=${OUT:-nightly}
SEEDS_DIR=${SEEDS_DIR:-seeds}
SEED=${SEED:-}
SHARD=${SHARD:-}
MUTANTS=${MUTANTS:-100}

# seconds D: D (as 1h30m, 10m, 90s) in seconds, or nothing if D is not one.
seconds() {
	echo "$1" | awk '
		!/^([0-9]+h)?([0-9]+m)?([0-9]+s)?$/ || $0 == "" { exit 1 }
		{
			s = 0; rest = $0
			while (match(rest, /^[0-9]+[hms]/)) {
				n = substr(rest, 1, RLENGTH - 1); u = substr(rest, RLENGTH, 1)
				s += n * (u == "h" ? 3600 : u == "m" ? 60 : 1)
				rest = substr(rest, RLENGTH + 1)
			}
			print s
		}'
}

total=$(seconds "$DURATION") || die_usage "DURATION=$DURATION: want a duration such as 1h, 10m, 90s or 1h30m"
[ "$total" -ge 10 ] || die_usage "DURATION=$DURATION: at least 10s (a tenth of it goes to long runs, which need 1s)"
case $PARALLEL in
'' | *[!0-9]* | 0) die_usage "PARALLEL=$PARALLEL: want a positive integer" ;;
esac
case $MUTANTS in
'' | *[!0-9]*) die_usage "MUTANTS=$MUTANTS: want a count (0: no mutant stage)" ;;
esac
case $SEED in
'') ;;
*[!0-9a-fA-F]*) die_usage "SEED=$SEED: want a decimal u64 (or a 40-hex commit hash)" ;;
esac
shard_i=0 shard_n=1
if [ -n "$SHARD" ]; then
	shard_i=${SHARD%%/*} shard_n=${SHARD#*/}
	case $shard_i/$shard_n in
	*[!0-9/]* | /* | */ | */*/*) die_usage "SHARD=$SHARD: want i/n with 0 <= i < n" ;;
	esac
	[ "$shard_n" -ge 1 ] && [ "$shard_i" -lt "$shard_n" ] || die_usage "SHARD=$SHARD: want i/n with 0 <= i < n"
	if [ "$shard_n" -gt 1 ] && [ -z "$SEED" ]; then
		die_usage "SHARD=$SHARD needs SEED: every shard of a campaign starts from the same first seed"
	fi
fi
# The campaigns' flags for SEED and SHARD (none when unset: a random first
# seed, the whole campaign).
campaign_flags=
[ -n "$SEED" ] && campaign_flags="-seed $SEED"
[ -n "$SHARD" ] && campaign_flags="${campaign_flags:+$campaign_flags }-shard $SHARD"
long_share=$((total / 10))
swarm_share=$((total - long_share))

now() { date -u +%Y-%m-%dT%H:%M:%SZ; }
start=$(now)
dir=$OUT/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$dir" || exit 1
echo "nightly: $dir"

# The worst status so far, by rank (129 > 128 > 1 > 0); any other status of
# a vopr (2: the script gave it bad flags; a signal's) counts as 1.
worst=0
rank() {
	case $1 in
	0) echo 0 ;;
	129) echo 3 ;;
	128) echo 2 ;;
	*) echo 1 ;;
	esac
}
note_status() {
	s=$1
	case $s in
	0 | 1 | 128 | 129) ;;
	130) # the table of a vopr this job interrupted: no finding of its own
		if [ "$interrupted" = 1 ]; then s=0; else s=1; fi ;;
	*) s=1 ;;
	esac
	[ "$(rank "$s")" -gt "$(rank "$worst")" ] && worst=$s
	return 0
}

# A signal stops the job: the running vopr gets it too (it prints its table
# and exits 130), and no later stage starts.
interrupted=0
signals=0
child=
on_signal() {
	interrupted=1
	signals=$((signals + 1))
	[ -n "$child" ] && kill -TERM "$child" 2>/dev/null
}
trap on_signal INT TERM

# runv OUT ERR ARGS...: runs vopr ARGS with stdout to OUT and stderr to ERR
# (appended), in the background so that a signal reaches the trap at once;
# returns vopr's exit status.
runv() {
	o=$1 e=$2
	shift 2
	"$VOPR" "$@" >>"$o" 2>>"$e" &
	child=$!
	# wait returns early (128 + the signal) when a trapped signal arrives,
	# the child still finishing: wait again until a wait ends with no new
	# signal. (A wait for a child already collected returns its status
	# again, in dash and bash alike.)
	seen=$signals
	wait "$child"
	rc=$?
	while [ "$seen" != "$signals" ]; do
		seen=$signals
		wait "$child"
		rc=$?
	done
	child=
	return "$rc"
}

manifest=$dir/nightly.txt
: >"$manifest"

version=$("$VOPR" -version 2>&1)
vrc=$?
echo "$version" >"$dir/version.txt"
[ $vrc -eq 0 ] || note_status 1

# stage NAME ARGS...: runs one campaign (or seed) into NAME.jsonl and
# NAME.txt, and records its flags, status, seeds and seeds per second.
stages=
stage() {
	name=$1
	shift
	stages="$stages $name"
	: >"$dir/$name.jsonl"
	t0=$(date +%s)
	runv "$dir/$name.jsonl" "$dir/$name.txt" "$@"
	rc=$?
	t1=$(date +%s)
	note_status $rc
	# Seeds' lines only, not the campaign's start and end records.
	seeds=$(grep -c '^{"schema":[0-9]*,"seed":' "$dir/$name.jsonl" 2>/dev/null)
	secs=$((t1 - t0))
	rate=$(awk -v n="${seeds:-0}" -v s="$secs" 'BEGIN { printf "%.2f", (s > 0 ? n / s : n) }')
	echo "$name: vopr $*; exit $rc; seeds $seeds in $secs s; seeds_per_second $rate" >>"$manifest"
}

# shellcheck disable=SC2086 # campaign_flags are words
stage swarm -duration "${swarm_share}s" -parallel "$PARALLEL" -keep-going $campaign_flags -json

long_start=$(date +%s)
k=-1
for f in "$SEEDS_DIR"/*.seed; do
	[ "$interrupted" = 0 ] || break
	[ -f "$f" ] || continue
	grep -q '^test: *vopr-long *$' "$f" || continue
	k=$((k + 1))
	[ $((k % shard_n)) -eq "$shard_i" ] || continue
	seed=$(sed -n 's/^seed: *//p' "$f")
	flags=$(sed -n 's/^flags: *//p' "$f")
	# shellcheck disable=SC2086 # flags are words
	stage "replay-$(basename "$f" .seed)" -seed "$seed" $flags -json
done

if [ "$interrupted" = 0 ]; then
	left=$((long_share - ($(date +%s) - long_start)))
	[ "$left" -ge 1 ] || left=1
	# shellcheck disable=SC2086 # campaign_flags are words
	stage long -long -duration "${left}s" -parallel "$PARALLEL" -keep-going $campaign_flags -json
fi

# Every failing seed again, with its trace and its timeline: its reproduce
# command (the last key of its JSON line) run by vopr timeline (the run's
# own output, and the page) with -trace.
failures=0
if [ "$interrupted" = 0 ]; then
	for name in $stages; do
		grep '^{"schema":[0-9]*,"seed":' "$dir/$name.jsonl" | grep -v '"result":"pass"' |
			sed -n 's/.*"reproduce":"vopr \([^"]*\)".*/\1/p'
	done >"$dir/failures.txt"
	while read -r args; do
		[ "$interrupted" = 0 ] || break
		seed=$(echo "$args" | sed 's/^-seed \([0-9]*\).*/\1/')
		echo "nightly: re-running vopr $args"
		# shellcheck disable=SC2086 # args are words
		runv "$dir/failure-$seed.txt" "$dir/failure-$seed.txt" timeline -o "$dir/timeline-$seed.html" $args -trace "$dir/trace-$seed.jsonl"
		failures=$((failures + 1))
	done <"$dir/failures.txt"
fi

# The mutant sample: the seed is the date, so each night draws another.
mutants_line=
if [ "$interrupted" = 0 ] && [ "$MUTANTS" -gt 0 ] && [ "$shard_i" -eq 0 ]; then
	mseed=$(date -u +%Y%m%d)
	: >"$dir/mutants.jsonl"
	t0=$(date +%s)
	runv "$dir/mutants.txt" "$dir/mutants.txt" mutants -seed "$mseed" -n "$MUTANTS" -parallel "$PARALLEL" -o "$dir/mutants.jsonl"
	rc=$?
	t1=$(date +%s)
	case $rc in
	0) ;;
	130) [ "$interrupted" = 1 ] || note_status 1 ;;
	*) note_status 1 ;;
	esac
	grep '"build":"ok"' "$dir/mutants.jsonl" | grep '"vopr":{"verdict":"survived"' >"$dir/survivors.jsonl"
	recall=$(sed -n 's/^VOPR recall: //p' "$dir/mutants.txt")
	named=$(sed -n 's/^named kills: //p' "$dir/mutants.txt")
	mutants_line="mutants: vopr mutants -seed $mseed -n $MUTANTS -parallel $PARALLEL; exit $rc; $((t1 - t0)) s; survivors $(grep -c . "$dir/survivors.jsonl"); VOPR recall: ${recall:-none}; named kills: ${named:-none}"
	echo "$mutants_line" >>"$manifest"
fi

if [ "$interrupted" = 1 ] && [ "$worst" = 0 ]; then
	worst=130
fi
{
	echo "status: $worst"
	echo "start: $start"
	echo "end: $(now)"
	echo "duration: $DURATION ($total s: swarm $swarm_share s, long runs $long_share s)"
	echo "parallel: $PARALLEL"
	[ -n "$SEED" ] && echo "seed: $SEED"
	[ -n "$SHARD" ] && echo "shard: $SHARD"
	echo "interrupted: $([ "$interrupted" = 1 ] && echo yes || echo no)"
	[ -n "$mutants_line" ] && echo "VOPR recall: ${recall:-none}"
	echo "vopr: $version"
	cat "$manifest"
	echo "failures re-run with traces: $failures"
} >"$manifest.tmp" && mv "$manifest.tmp" "$manifest"
echo "$worst" >"$dir/status.txt"
cat "$manifest"
for name in swarm long; do
	[ -f "$dir/$name.txt" ] && sed -n '/^campaign seeds=/,$p' "$dir/$name.txt"
done
exit "$worst"
