# vopr: a deterministic cluster simulator for Apache Iggy's replica plane.
# Everything here needs only Go (go.mod names the version); modules come from
# the Go module proxy on first use.

GO       ?= go
BIN      := bin/vopr
FUZZTIME ?= 2m
BENCHTIME ?= 1s

.PHONY: all build run test fuzz bench lint clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/vopr

# Until the simulator lands, the main job decodes the bundled sample stream:
# one frame of every replica-plane command, two of them deliberately invalid.
run: build
	./$(BIN) decode cmd/vopr/testdata/sample.bin

# Unit, scenario and rapid property tests, plus every fuzz target over its
# seed corpus (go test runs Fuzz functions on testdata/fuzz without fuzzing).
test:
	$(GO) test ./...

# Fuzz every target for FUZZTIME each (make fuzz FUZZTIME=30s).
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$target ($(FUZZTIME))"; \
	    $(GO) test $$pkg -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME); \
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
