# cachelab: see README.md. `make run` and `make test` are the two set-up commands.
GO ?= go
PKGS := ./...

deps: ## install optional tools (Debian's chromium, for the report browser test)
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) ; }
	@command -v chromium >/dev/null 2>&1 && chromium --version || echo "chromium not installed"

.PHONY: deps run test test-short lint vet fmt-check bench fuzz tidy help

help: ## list targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

run: ## run the built-in scenarios against every subject (virtual time, no cluster)
	$(GO) run ./cmd/cachelab run

test: lint ## vet, gofmt check, then every test with the race detector
	$(GO) test -race -count=1 $(PKGS)

test-short: ## quick tests without the race detector
	$(GO) test -short $(PKGS)

lint: vet fmt-check ## go vet + gofmt check

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

bench: ## benchmarks (ratios against baselines measured in the same run)
	$(GO) test -run='^$$' -bench=. -benchmem $(PKGS)

fuzz: ## each fuzz target for FUZZTIME (default 60s)
	./.ci/fuzz.sh $${FUZZTIME:-60s}

tidy:
	$(GO) mod tidy
