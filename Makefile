# massgen — see README.md. `make test` is what CI runs.
GO       ?= go
BIN      ?= bin/massgen
FUZZTIME ?= 60s
BENCH    ?= .

.PHONY: build test lint bench fuzz install test-deps clean

build:
	$(GO) build -o $(BIN) .

test:
	$(GO) test -race ./...

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem ./...

# Runs every Fuzz target for FUZZTIME each (one minute by default).
fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

install:
	$(GO) install .

# What the tests need beyond Go: npm packages for the MCP tests (into .cache/npm).
test-deps:
	./scripts/test-deps.sh

clean:
	rm -rf bin .cache
