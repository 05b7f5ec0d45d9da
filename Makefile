# vopr: a deterministic cluster simulator for Apache Iggy's replica plane.
# Everything here needs only Go (go.mod names the version); modules come from
# the Go module proxy on first use.

GO       ?= go
BIN      := bin/vopr
FUZZTIME ?= 2m
BENCHTIME ?= 1s

.PHONY: all build run decode-sample nightly test fuzz bench lint clean mutants

all: build

# -buildvcs=auto: vopr -version (and every run's build line) names the
# git revision the binary was built from, whatever GOFLAGS says.
build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/vopr

# A campaign of about 30 seconds on 2 cores: one summary line per seed, in
# seed order, then the campaign table; it stops at the first failure and
# exits with its status (129 correctness, 128 liveness, 1 simulator error).
# SEED=N starts the campaign at seed N (CI does, so that it is reproducible);
# without it the first seed is random and printed first.
run: build
	./$(BIN) $(if $(SEED),-seed $(SEED)) -duration 30s -parallel 2

# Decode the bundled sample stream: one frame of every replica-plane
# command, two of them deliberately invalid.
decode-sample: build
	./$(BIN) decode cmd/vopr/testdata/sample.bin

# The nightly job: scripts/nightly.sh (its header says everything), for
# DURATION (default 1h: make nightly DURATION=10m) on every core, into
# nightly/<UTC time>/: a swarm campaign for nine tenths of it, the long-run
# regression seeds and long runs (vopr -long) for the last tenth, every
# failing seed re-run with its trace, and status.txt and nightly.txt (the
# status, flags, start and end times, seeds per second, vopr -version).
# The script exits with the worst status of its campaigns (129 > 128 > 1 >
# 0; 2 only for its own usage errors); make turns any failure into its own
# status 2, so the scheduled job runs scripts/nightly.sh itself, and make
# nightly is for people.
DURATION ?= 1h
nightly: build
	DURATION=$(DURATION) VOPR=$(BIN) ./scripts/nightly.sh

# The VOPR's power on mutants of the replica (vopr mutants, issue 26):
# MUTANTS mutants (default 300) drawn from SEED (random when unset, printed
# first), spread over the replica's packages (PKG=replica/vsr,... narrows
# them), each built with go build -overlay and judged by 100 VOPR seeds and
# its package's unit tests, on every core; the table (VOPR recall, named
# kills, the survivors) on stdout, one JSON line per mutant in
# bin/mutants.jsonl. Not part of make test.
MUTANTS ?= 300
mutants: build
	./$(BIN) mutants $(if $(SEED),-seed $(SEED)) -n $(MUTANTS) -parallel $$(nproc) -o bin/mutants.jsonl $(if $(PKG),-pkg $(PKG))

# Unit, scenario and rapid property tests, plus every fuzz target over its
# seed corpus (go test runs Fuzz functions on testdata/fuzz without fuzzing).
# The determinism tests run once more under the race detector: simulations
# running at once on several goroutines must share nothing.
test:
	$(GO) test ./...
	$(GO) test -race -run 'TestParallelCampaignMatchesSerial' ./sim -determinism.seeds=2

# Fuzz every target for FUZZTIME each (make fuzz FUZZTIME=30s). Minimizing
# a new interesting input is capped at 100 runs: go's default (60 s per
# input) spends most of the time minimizing the sample-stream seeds of
# FuzzReader (39 KB each), and the exec counter stands still meanwhile.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$target ($(FUZZTIME))"; \
	    $(GO) test $$pkg -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 100x; \
	  done; \
	done

# Benchmarks with allocation counts; compare runs with benchstat.
bench:
	$(GO) test ./... -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf bin

# The canary suite (canary/README.md): deliberate bugs in the replica, each
# behind its own build tag. For every canary, bin/vopr-<tag> runs a campaign
# of swarm seeds 1..4000 (-seed 1 -seeds 4000 -parallel $(nproc); vopr stops at
# the first failure) that must exit 129 (128 for a liveness canary) with the
# violation the canary expects. Prints each canary's first failing seed
# (seeds-to-catch) and violation; fails if any canary escapes.
# canary/run.sh -go runs the same suite through the Go driver instead.
.PHONY: canary
canary:
	GO=$(GO) ./canary/run.sh

# Shrink every canary's first failing seed with vopr shrink and check that
# each shrunk run, replayed from its plan alone, fails the same way and is
# smaller (scripts/shrink-canaries.sh; BUDGET per canary, default 2m). Not
# part of make test.
.PHONY: shrink-canaries
shrink-canaries:
	GO=$(GO) ./scripts/shrink-canaries.sh

# Render a failing canary run's timeline (vopr timeline) in headless
# Chromium, Debian's chromium package (installed when missing), and check
# the DOM has every replica's and client's lane and the violation, and that
# a screenshot is not blank (scripts/timeline-check.sh; TAG=canary_... picks
# the canary, TAG=all checks every one, on its shrunk run and with its sweep
# when make shrink-canaries left them; DOCS=1 saves the screenshot as
# docs/timeline.png). Not part of make test or CI, which need only Go.
.PHONY: timeline-check
timeline-check:
	GO=$(GO) ./scripts/timeline-check.sh
