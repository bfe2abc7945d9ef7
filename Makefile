# mcpward — the one entry point. See README.md.
#
#   make test    every module's tests with -race (the keychain adapter against a
#                real Secret Service under dbus-run-session; the PostgreSQL
#                adapter against a private cluster; the npm peers of peers/
#                installed first)
#   make install the mcpward CLI into $GOBIN (else $GOPATH/bin), its --version
#                from git describe (VERSION=v1.2.3 to choose it)
#   make check   gofmt, vet, go mod tidy -diff per module (GOWORK=off), the
#                dependency rule, then make test. It needs the Go module proxy
#                (GOPROXY, proxy.golang.org by default): go mod tidy resolves
#                each module's whole dependency graph on its own, test
#                dependencies included, which may download modules no build
#                has fetched
#   make fuzz    every fuzz target for FUZZTIME each (default 60s; a new
#                input is minimized for at most FUZZMINTIME, default 5s)
#   make bench   the benchmarks recorded in BENCHMARKS.md
#   make bench-peers  the raw go-sdk client, mark3labs/mcp-go and mcpward
#                side by side against one server, each in its own process
#                (bench/; a few minutes; BENCHPEERS_FLAGS=-rounds=3 etc.)
#   make demo    the whole flow: the CLI and the example server on an embedded
#                demo configuration
#   make replace-lines DIR=/path/to/host
#                the go.mod replace lines a host outside this checkout needs
#                to depend on it (README, "Embedding the library"), run in
#                DIR; without DIR, printed
#   make conformance
#                the official MCP conformance suites (pinned in peers/, run on
#                the Node 22 pinned there) against bin/mcpward-conformance:
#                every client scenario of the legacy suite, and the client
#                requirement set of protocol 2026-07-28; one line per scenario

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
GO ?= go
FUZZTIME ?= 60s
# Go minimizes every input that finds new coverage for up to 60 s by default,
# during which its worker runs nothing else: a target whose inputs are large
# (core/catalog's generated servers) then spends most of a short run there.
FUZZMINTIME ?= 5s
BENCHTIME ?= 1s
BENCHCOUNT ?= 6

# Every module of go.work. The keychain adapter runs apart (it needs a
# Secret Service session). composition/cmd/mcpward is the CLI, a module of
# its own (the only one that depends on cobra). bench is the peer benchmark
# (its test is a short smoke run; the benchmark itself runs only with make
# bench-peers). composition/desktop and composition/shared are the profiles
# needing a keychain or PostgreSQL, modules of their own so a host using
# another profile never resolves those; composition/internal/pgtest (the
# tests' PostgreSQL cluster) and composition/integration (tests needing
# modules no host should resolve) are test-only modules nothing imports.
MODULES := ports core conformance adapters/internal/jsonrpcwire adapters/filestore adapters/memstore adapters/hostconfig adapters/keychainstore adapters/pgstore adapters/stdiotransport adapters/httptransport adapters/oauth adapters/mcpsession bridges/anthropic bridges/openai examples composition composition/desktop composition/shared composition/internal/pgtest composition/integration composition/cmd/mcpward bench

# The library modules a host may depend on (make replace-lines): every
# module but the CLI, the examples, the benchmark and the test-only ones.
LIBRARY_MODULES := ports core conformance adapters/internal/jsonrpcwire adapters/filestore adapters/memstore adapters/hostconfig adapters/keychainstore adapters/pgstore adapters/stdiotransport adapters/httptransport adapters/oauth adapters/mcpsession bridges/anthropic bridges/openai composition composition/desktop composition/shared
PLAIN_MODULES := $(filter-out adapters/keychainstore,$(MODULES))

# The version "mcpward --version" prints (main.version); empty, the CLI
# falls back to the build information the go command records.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)

.PHONY: install test peers conformance conformance-client test-plain test-keychain check fmt vet tidy deps wire wirecheck fuzz bench bench-peers demo replace-lines

test: peers test-plain test-keychain

# go install of the CLI module (composition/cmd/mcpward): the binary lands in
# $GOBIN, else $GOPATH/bin (go env GOBIN GOPATH). Its dependencies come from
# the module cache, else the Go module proxy.
install:
	@cd composition/cmd/mcpward && $(GO) install -ldflags "-X main.version=$(VERSION)" .
	@echo "installed mcpward $(VERSION) in $$(d=$$($(GO) env GOBIN); [ -n "$$d" ] || d=$$($(GO) env GOPATH)/bin; echo $$d)"

# The third-party MCP servers the integration tests run against, pinned
# exactly in peers/package-lock.json. With them installed the tests that use
# them fail rather than skip (MCPWARD_REQUIRE_PEERS=1).
peers: peers/node_modules/.package-lock.json

peers/node_modules/.package-lock.json: peers/package.json peers/package-lock.json
	@command -v npm >/dev/null || { echo "missing npm: apt-get install nodejs npm (Node 20 or newer; the suite runs on the Node 22 peers/ pins)"; exit 1; }
	@echo "== npm ci (peers)"
	@cd peers && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# adapters/pgstore starts a private PostgreSQL cluster (initdb and postgres
# from the postgresql package, run as the postgres user under root); with
# MCPWARD_REQUIRE_PG=1 its tests fail rather than skip when it is missing.
test-plain: export MCPWARD_REQUIRE_PEERS = 1
test-plain: export MCPWARD_REQUIRE_PG = 1
test-plain:
	@for m in $(PLAIN_MODULES); do \
		echo "== go test -race $$m"; \
		(cd $$m && $(GO) test -race -count=1 -timeout 30m ./...) || exit 1; \
	done

# The real OS keychain: a fresh gnome-keyring in a private D-Bus session, HOME
# and XDG_RUNTIME_DIR in temporary directories (scripts/keyring-session.sh).
test-keychain:
	@echo "== go test -race adapters/keychainstore, OAuth sign-in on the desktop profile and the CLI's (real Secret Service)"
	@command -v dbus-run-session >/dev/null && command -v gnome-keyring-daemon >/dev/null || \
		{ echo "missing dbus-run-session or gnome-keyring-daemon: apt-get install gnome-keyring dbus libsecret-tools libglib2.0-bin"; exit 1; }
	@export GOCACHE="$$($(GO) env GOCACHE)" GOMODCACHE="$$($(GO) env GOMODCACHE)" GOPATH="$$($(GO) env GOPATH)" GOENV="$$($(GO) env GOENV)" && \
		home=$$(mktemp -d) && trap 'rm -rf "$$home"' EXIT && \
		HOME=$$home dbus-run-session -- sh scripts/keyring-session.sh sh -c \
			'cd adapters/keychainstore && $(GO) test -race -count=1 ./... && \
			 cd ../../composition/desktop && $(GO) test -race -count=1 -run "^TestOAuthDesktopKeychain$$" -v . >"$$HOME/oauth.log" 2>&1; rc=$$?; \
			 grep -E "^(---|ok|FAIL|PASS)|Error|Messages" "$$HOME/oauth.log"; [ $$rc -eq 0 ] || exit $$rc; \
			 cd ../cmd/mcpward && $(GO) test -race -count=1 -run "^TestDesktopKeychain$$" -v . >"$$HOME/cli.log" 2>&1; rc=$$?; \
			 grep -E "^(---|ok|FAIL|PASS)|Error|Messages" "$$HOME/cli.log"; exit $$rc'

check: fmt vet tidy deps wirecheck test

fmt:
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	@for m in $(MODULES); do (cd $$m && $(GO) vet ./...) || exit 1; done

tidy:
	@for m in $(MODULES); do \
		(cd $$m && GOWORK=off $(GO) mod tidy -diff) || { echo "go mod tidy needed in $$m"; exit 1; }; \
	done

# The dependency rule of DESIGN.md, checked with go list -deps over every module.
deps:
	@cd core && $(GO) test -count=1 -run 'TestDependencyRule|TestViolationRules' .

# Every FuzzXxx target of every module, FUZZTIME each, one at a time.
fuzz:
	@for m in $(MODULES); do \
		for pkg in $$(cd $$m && $(GO) list ./...); do \
			for f in $$(cd $$m && $(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
				echo "== fuzz $$pkg $$f"; \
				(cd $$m && $(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) -parallel 1 $$pkg) || exit 1; \
			done; \
		done; \
	done

# The main job: build the mcpward CLI and the example MCP server (examples/),
# then run the whole flow on an embedded demo configuration: list, approve,
# connect and list tools, call a tool.
demo:
	@mkdir -p bin
	@cd examples && $(GO) build -o ../bin/example-server ./server
	@cd composition/cmd/mcpward && $(GO) build -o ../../../bin/mcpward .
	@./bin/mcpward demo --server ./bin/example-server

# The client program the conformance suite runs for each scenario: built on
# the Host API (composition), it signs in without a person by following the
# suite's authorization URL itself.
conformance-client:
	@mkdir -p bin
	@cd composition/cmd/mcpward && $(GO) build -o ../../../bin/mcpward-conformance ./mcpward-conformance

# Every client scenario of the pinned legacy suite, one at a time (a few
# seconds each at most), then the 2026-07-28 client requirement set of the
# next suite; TestOfficialConformance asserts the expected sets.
conformance: peers conformance-client
	@scripts/conformance.sh

# Wire runs from composition (its go.mod has the tool directive) over its
# own packages and, through go.work, the desktop and shared modules'.
WIRE_PKGS := ./... ./desktop ./shared

wire:
	@cd composition && $(GO) tool wire $(WIRE_PKGS)

wirecheck:
	@cd composition && $(GO) tool wire diff $(WIRE_PKGS) >/dev/null || { echo "a wire_gen.go of composition is stale: run make wire"; exit 1; }

# One "go mod edit -replace" line per library module, pointing at this
# checkout: what a host module outside it needs until mcpward is
# published (README, "Embedding the library"). With DIR they are run in
# DIR (a module: go mod init first); without, printed.
replace-lines:
	@for m in $(LIBRARY_MODULES); do echo "go mod edit -replace=github.com/mcpward/mcpward/$$m=$(CURDIR)/$$m"; done | \
		if [ -n "$(DIR)" ]; then \
			[ -f "$(DIR)/go.mod" ] || { echo "replace-lines: $(DIR) has no go.mod (run go mod init there first)"; exit 1; }; \
			(cd "$(DIR)" && sh -e); \
		else cat; fi

bench:
	@for m in $(MODULES); do \
		(cd $$m && $(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) ./...) || exit 1; \
	done

# The peer benchmark: builds the benchmark's server and one client program
# per client kind (raw go-sdk, mark3labs/mcp-go, mcpward), runs them in
# interleaved rounds over stdio and Streamable HTTP on loopback, and prints
# the markdown table of BENCHMARKS.md ("Side by side with other clients").
BENCHPEERS_FLAGS ?=
bench-peers:
	@cd bench && $(GO) run ./cmd/bench-peers $(BENCHPEERS_FLAGS)
