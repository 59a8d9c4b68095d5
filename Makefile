# massgen — see README.md. `make test` is what CI runs.
GO       ?= go
BIN      ?= bin/massgen
FUZZTIME ?= 60s
BENCH    ?= .
# Release builds: no symbol table or DWARF (-s -w: about 30% smaller) and no build paths
# (-trimpath). VERSION=v1.2.3 stamps the version --version, `mcp serve` and the logs report
# (internal/buildinfo); without it they report the module version or "(devel)".
VERSION  ?=
LDFLAGS  := -s -w$(if $(VERSION), -X github.com/massgen-go/massgen/internal/buildinfo.version=$(VERSION))
BUILDFLAGS := -trimpath -ldflags "$(LDFLAGS)"

.PHONY: build test test-short lint bench bench-coordination fuzz install test-deps wine-test clean

build:
	$(GO) build $(BUILDFLAGS) -o $(BIN) .

# Every test, with the race detector: what CI runs. The timeout is per package; the slowest
# package (e2e) takes about 10 minutes on a loaded 2-core machine.
test:
	$(GO) test -race -timeout 45m ./...

# The developer's loop: no race detector, no real-process suites or long swap loops (-short).
test-short:
	$(GO) test -short -timeout 10m ./...

# gofmt, then scripts/cross.sh: build, vet and compile every test binary for linux, darwin and
# windows on amd64 and arm64 (PLATFORMS="linux/amd64 ..." narrows it).
lint:
	@out=$$(find . -name '*.go' -not -path './.git/*' -not -path './.cache/*' -print0 | xargs -0 gofmt -l); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	GO=$(GO) ./scripts/cross.sh

bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem ./...

# What a coordination costs as the number of agents grows: model requests, characters sent and
# wall time for 2, 8, 20 and 50 agents, and the restart-grace trade-off (docs/orchestrator.md).
bench-coordination:
	$(GO) test -run '^$$' -bench '^Benchmark(Coordination|RestartGrace)$$' -benchtime 3x ./orchestrator

# The Windows tests of the file tools, under Wine (Linux amd64; skipped, saying so, without wine).
wine-test:
	GO=$(GO) ./scripts/wine-test.sh

# Runs every Fuzz target for FUZZTIME each (one minute by default).
fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

# Installs the binary into $(go env GOBIN), else $(go env GOPATH)/bin. A cold module and build
# cache takes a few minutes (about 90 modules are downloaded and compiled).
install:
	@echo 'go install $(BUILDFLAGS) . (a few minutes on a cold cache)'
	$(GO) install $(BUILDFLAGS) .
	@bin=$$($(GO) env GOBIN); [ -n "$$bin" ] || bin=$$($(GO) env GOPATH)/bin; \
	echo "installed $$bin/massgen"

# What the tests need beyond Go: npm packages for the MCP tests (into .cache/npm).
test-deps:
	./scripts/test-deps.sh

clean:
	rm -rf bin .cache
