#!/bin/sh
# timeline-check.sh: render a failing canary run's timeline in headless
# Chromium and check what it drew (make timeline-check; not part of make
# test or CI, which need only Go).
#
# It installs Debian's chromium when /usr/bin/chromium is missing (sudo
# only when not root; a browser a tool downloads for itself fails here),
# builds bin/vopr-TAG with the canary's build tag, and takes its failing
# run: the shrunk one when bin/shrink/TAG.plan exists (make
# shrink-canaries writes it), else the first failing seed of a campaign
# of seeds 1..SEEDS. It writes the run's page with vopr timeline, then
#
#   - chromium --dump-dom: the DOM must hold a lane labelled replica 0 ..
#     replica R-1 and client 0 .. client C-1 (R and C from the run's
#     options line), the violation (its mark and its text), both charts
#     set up by the page's script (data-zoom="ready"), and with a sweep the
#     failure likelihood lane;
#   - chromium --screenshot at 1400x900: pngcheck must find it not blank.
#
# A sweep of the run (vopr branch -sweep -o: bin/shrink/TAG.sweep.json,
# which make shrink-canaries writes beside the plan, or SWEEP=FILE) adds
# its failure likelihood lane (-likelihood).
#
# Environment: TAG (default canary_commit_one_ack; TAG=all checks every
# canary of canary/run.sh's table, each on its shrunk run when make
# shrink-canaries left one), SEEDS (default 4000),
# PARALLEL (default nproc), GO (default go), SWEEP, DOCS=1 to copy the
# screenshot to docs/timeline.png. Outputs under bin/timeline/.
set -u
cd "$(dirname "$0")/.."
GO=${GO:-go}
TAG=${TAG:-canary_commit_one_ack}
SEEDS=${SEEDS:-4000}
PARALLEL=${PARALLEL:-$(nproc)}
out=bin/timeline
mkdir -p "$out"

fail() {
	echo "timeline-check: $*" >&2
	exit 1
}

if [ ! -x /usr/bin/chromium ]; then
	sudo=""
	[ "$(id -u)" -ne 0 ] && sudo=sudo
	echo "timeline-check: installing chromium (Debian's package)"
	$sudo apt-get update -qq || fail "apt-get update failed"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >"$out/apt.log" 2>&1 ||
		fail "apt-get install chromium failed; see $out/apt.log"
fi
# Headless, as root in a container: no sandbox, no GPU. Debian's wrapper
# script chatters on stderr; the checks read stdout and the files.
chromium() {
	/usr/bin/chromium --headless --no-sandbox --disable-gpu --hide-scrollbars "$@" 2>>"$out/chromium.log"
}

$GO build -o bin/pngcheck ./scripts/pngcheck || fail "building pngcheck failed"

# check_one TAG: one canary's run, page, DOM and screenshot; run in a
# subshell, so that its fail ends that canary's check only.
check_one() {
	TAG=$1
	bin=bin/vopr-$TAG
	$GO build -tags "$TAG" -o "$bin" ./cmd/vopr || fail "building $bin failed"
	plan=bin/shrink/$TAG.plan
	sweep=${SWEEP:-}
	if [ -f "$plan" ]; then
		set -- -plan "$plan"
		what="the shrunk run $plan"
		[ -z "$sweep" ] && [ -f "bin/shrink/$TAG.sweep.json" ] && sweep=bin/shrink/$TAG.sweep.json
	else
		seed=$("$bin" -seed 1 -seeds "$SEEDS" -parallel "$PARALLEL" 2>/dev/null |
			sed -n 's/^seed=\([0-9]*\) result=\(correctness\|liveness\|error\) .*/\1/p' | head -n 1)
		[ -n "$seed" ] || fail "$TAG: no failing seed in 1..$SEEDS"
		set -- -seed "$seed"
		what="seed $seed"
	fi
	if [ -n "$sweep" ]; then
		set -- "$@" -likelihood "$sweep"
		what="$what with the sweep $sweep"
	fi
	page=$out/$TAG.html
	"$bin" timeline -o "$page" -perfetto "$out/$TAG.json" "$@" >"$out/$TAG.txt" 2>&1
	rc=$?
	[ $rc -eq 129 ] || [ $rc -eq 128 ] || fail "$TAG $what: vopr timeline exited $rc, not a failure; see $out/$TAG.txt"
	[ -s "$page" ] || fail "no page: see $out/$TAG.txt"
	replicas=$(sed -n 's/^options replicas=\([0-9]*\) .*/\1/p' "$out/$TAG.txt" | head -n 1)
	clients=$(sed -n 's/^options replicas=[0-9]* clients=\([0-9]*\) .*/\1/p' "$out/$TAG.txt" | head -n 1)
	[ -n "$replicas" ] && [ -n "$clients" ] || fail "no options line in $out/$TAG.txt"
	violation=$(sed -n 's/^\(violation\|error\): //p' "$out/$TAG.txt" | head -n 1)
	echo "timeline-check: $TAG $what: $replicas replicas, $clients clients, exit $rc: $violation"
	echo "timeline-check: page $page ($(wc -c <"$page") bytes)"

	url="file://$PWD/$page"
	dom=$out/$TAG.dom.html
	chromium --dump-dom "$url" >"$dom" || fail "chromium --dump-dom failed; see $out/chromium.log"
	missing=""
	i=0
	while [ $i -lt "$replicas" ]; do
		grep -q ">replica $i<" "$dom" || missing="$missing 'replica $i'"
		i=$((i + 1))
	done
	i=0
	while [ $i -lt "$clients" ]; do
		grep -q ">client $i<" "$dom" || missing="$missing 'client $i'"
		i=$((i + 1))
	done
	grep -q 'class="viol"' "$dom" || missing="$missing 'the violation mark'"
	grep -q 'id="violation"' "$dom" || missing="$missing 'the violation text'"
	[ "$(grep -o 'data-zoom="ready"' "$dom" | wc -l)" -eq 2 ] || missing="$missing 'both charts set up by the script'"
	if [ -n "$sweep" ]; then
		grep -q '>failure likelihood<' "$dom" || missing="$missing 'the failure likelihood lane'"
	fi
	[ -z "$missing" ] || fail "the DOM ($dom) lacks:$missing"
	echo "timeline-check: DOM ($(wc -c <"$dom") bytes): lanes replica 0..$((replicas - 1)), client 0..$((clients - 1)), the violation, both charts scripted${sweep:+, the failure likelihood}"

	png=$out/$TAG.png
	chromium --screenshot="$png" --window-size=1400,900 "$url" >/dev/null || fail "chromium --screenshot failed; see $out/chromium.log"
	bin/pngcheck "$png" || fail "the screenshot $png looks blank"
	if [ "${DOCS:-}" = 1 ]; then
		cp "$png" docs/timeline.png && echo "timeline-check: copied to docs/timeline.png"
	fi
	echo "timeline-check: $TAG ok"
}

tags=$TAG
if [ "$TAG" = all ]; then
	tags=$(sed -n "/^CANARIES='/,/^'/p" canary/run.sh | sed -n 's/^\(canary_[a-z_]*\) .*/\1/p')
fi
failed=""
checked=0
for tag in $tags; do
	(check_one "$tag") || failed="$failed $tag"
	checked=$((checked + 1))
done
if [ -n "$failed" ]; then
	echo "timeline-check: FAILED:$failed (of $checked)"
	exit 1
fi
echo "timeline-check: ok ($checked canaries)"
