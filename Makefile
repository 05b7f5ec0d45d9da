# vopr: a deterministic cluster simulator for Apache Iggy's replica plane.
# Everything here needs only Go (go.mod names the version); modules come from
# the Go module proxy on first use.

GO       ?= go
BIN      := bin/vopr
FUZZTIME ?= 2m
BENCHTIME ?= 1s

.PHONY: all build run decode-sample nightly test fuzz bench lint clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/vopr

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

# A long campaign on every core (DURATION, default 1h: make nightly
# DURATION=10m) into nightly/<UTC time>/: results.jsonl (one JSON line per
# seed), summary.txt (the campaign table), and for every failing seed its
# full output (failure-SEED.txt) and event trace (trace-SEED.jsonl), from a
# re-run of its reproduction command. Exits with the campaign's status.
nightly: build
	@dir=nightly/$$(date -u +%Y%m%dT%H%M%SZ); mkdir -p $$dir; echo "nightly: $$dir"; \
	status=0; ./$(BIN) -duration $${DURATION:-1h} -parallel $$(nproc) -keep-going -json \
	  >$$dir/results.jsonl 2>$$dir/summary.txt || status=$$?; \
	grep -v '"result":"pass"' $$dir/results.jsonl | sed -n 's/.*"reproduce":"vopr \([^"]*\)".*/\1/p' | \
	while read -r args; do \
	  seed=$$(echo "$$args" | sed 's/^-seed \([0-9]*\).*/\1/'); \
	  echo "nightly: re-running $$args"; \
	  ./$(BIN) $$args -trace $$dir/trace-$$seed.jsonl >$$dir/failure-$$seed.txt 2>&1; \
	done; \
	cat $$dir/summary.txt; exit $$status

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
# of swarm seeds 1..200 (-seed 1 -seeds 200 -parallel $(nproc); vopr stops at
# the first failure) that must exit 129 (128 for a liveness canary) with the
# violation the canary expects. Prints each canary's first failing seed
# (seeds-to-catch) and violation; fails if any canary escapes.
# canary/run.sh -go runs the same suite through the Go driver instead.
.PHONY: canary
canary:
	GO=$(GO) ./canary/run.sh
