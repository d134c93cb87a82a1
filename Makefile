# cachelab: see README.md. `make run` and `make test` are the two set-up commands.
GO ?= go
PKGS := ./...

.PHONY: image image-test kubectl help deps run test test-count3 examples test-short lint vet fmt-check bench fuzz tidy codegen verify-codegen mutation-score reproduction determinism explore-table hassynced campaign-memory property property-all load-test real-apiserver real-apiserver-start real-apiserver-stop bench-envtest fidelity-record operator-e2e openapi-record upstream operators

help: ## list targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

deps: ## install optional tools (Debian's chromium, for the report browser test)
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) ; }
	@command -v chromium >/dev/null 2>&1 && chromium --version || echo "chromium not installed"


run: ## run the built-in scenarios against every subject (virtual time, no cluster); writes out/index.html and the course, out/course.html
	$(GO) run ./cmd/cachelab run

test: lint ## vet, gofmt check, then every test with the race detector
	$(GO) test -race -count=1 -timeout 40m $(PKGS)

examples: ## the examples module (examples/): a client-go controller and a controller-runtime reconciler under random plans, and each one's planted bug caught
	cd examples && $(GO) test -count=1 -timeout 10m ./... -rapid.checks=$${CHECKS:-300} -rapid.shrinktime=5s $${SEED:+-rapid.seed=$$SEED}

upstream: ## slow: kube-controller-manager's real ReplicaSet, Job, StatefulSet, DaemonSet, HPA (KEP-5647's gate on and off) and Deployment controllers, and the cluster around an operator (k8s.io/kubernetes v1.37.1, nested module upstream/): their tests, then PLANS random plans each (default 200, from SEED, default 1; SHRINK=1 shrinks each subject's first failing plan of each invariant); prints the tables (also upstream/<controller>/campaign.md)
	cd upstream && $(GO) test -count=1 -timeout 10m ./...
	cd upstream && { $(GO) test -p 1 -count=1 -timeout 60m -run '^TestCampaign$$' ./replicaset ./job ./deployment ./statefulset ./daemonset ./hpa -v \
		-upstream.plans=$${PLANS:-200} -upstream.seed=$${SEED:-1} $${SHRINK:+-upstream.shrink} -upstream.table=campaign.md > campaign.log 2>&1; \
		st=$$?; grep -v -e '^=== RUN' -e '^--- PASS' -e '^PASS$$' campaign.log; exit $$st; }

test-count3: ## slow: every test three times in one process, with the race detector (go test -race -count=3), in the main module and in examples/: what a CI that sets -count sees; run it before a session stops
	$(GO) test -race -count=3 -timeout 90m $(PKGS)
	cd examples && $(GO) test -race -count=3 -timeout 30m ./...

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

fuzz: ## each fuzz target for FUZZTIME (default 60s), minimizing at most FUZZMINIMIZE (2s) per new input
	./.ci/fuzz.sh $${FUZZTIME:-60s}

tidy:
	$(GO) mod tidy

codegen: ## regenerate Bellerophon's DeepCopy (deepcopy-gen through the module proxy)
	subjects/bellerophon/hack/update-codegen.sh

verify-codegen: ## check the committed DeepCopy is up to date
	VERIFY=1 subjects/bellerophon/hack/update-codegen.sh

property: ## property-test one subject: SUBJECT=bellerophon/no-uid-check [CHECKS=100] [SEED=n]; prints seed, progress, the shrunk plan, failfile and replay command
	@test -n "$(SUBJECT)" || { echo "give SUBJECT=<subject> (cachelab list shows them)"; exit 2; }
	CACHELAB_PROPERTY_SUBJECT=$(SUBJECT) $(GO) test ./invariants -run '^TestPropertyOfOneSubject$$' -v -count=1 -timeout 60m -rapid.checks=$${CHECKS:-100} $${SEED:+-rapid.seed=$$SEED}

property-all: ## property-test every real subject on every invariant it claims (CHECKS, default 100)
	$(GO) test ./invariants -run '^TestPropertiesHoldForEverySubject$$' -count=1 -v -timeout 60m -rapid.checks=$${CHECKS:-100}

mutation-score: ## slow: property tests against every Bellerophon mutant (CHECKS, default 300)
	CACHELAB_MUTATION=1 $(GO) test ./invariants -run TestMutationScore -v -timeout 60m -rapid.checks=$${CHECKS:-300}

campaign-memory: ## slow: RUNS (default 10000) random runs of bellerophon must peak under 1 GiB RSS (GNU time)
	$(GO) build -o /tmp/cachelab-campaign ./cmd/cachelab
	@command -v /usr/bin/time >/dev/null || { echo "needs GNU time (/usr/bin/time)"; exit 2; }
	/usr/bin/time -f '%M' -o /tmp/cachelab-campaign.rss /tmp/cachelab-campaign run --random $${RUNS:-10000} --out "" | tail -3
	@kb=$$(tail -1 /tmp/cachelab-campaign.rss); echo "peak RSS: $$((kb / 1024)) MiB for $${RUNS:-10000} runs (budget 1024 MiB)"; [ "$$kb" -lt 1048576 ]

reproduction: ## slow: replay every failing random plan of six mutants 10 times (PLANS per mutant, default 40) and print the reproduction table
	CACHELAB_REPRODUCTION=$${PLANS:-40} $(GO) test ./internal/lab -run TestReproductionTable -v -count=1 -timeout 60m

determinism: ## the built-in runs (every scenario x subject) RUNS times each (default 10), each in its own bubble: distinct delivery schedules and records per run, each schedule difference traced to its first cause; fails on a difference no handler batch in client-go's map order explains. KUBE_FEATURE_WatchListClient=false make determinism takes the WatchList away
	@CACHELAB_DETERMINISM=$${RUNS:-10} $(GO) test ./internal/lab -run '^TestBuiltinRunsHaveOneSchedule$$' -v -count=1 -timeout 30m > /tmp/cachelab-determinism.log 2>&1; \
		st=$$?; grep -v -e '^=== ' -e '^ *--- PASS' /tmp/cachelab-determinism.log; exit $$st

explore-table: ## slow (15 min): per Bellerophon subject, the smallest random plan (seeds 1..PLANS, default 40) whose schedules within one deviation hold a failure; exploration against RANDOM_SCHEDULES (1000) shuffled schedules on the plans of sim/testdata/explore
	CACHELAB_EXPLORE=$${PLANS:-40} CACHELAB_RANDOM_SCHEDULES=$${RANDOM_SCHEDULES:-1000} $(GO) test ./internal/lab -run 'TestExploreTable|TestExploreVersusRandomSchedules' -v -count=1 -timeout 90m

hassynced: ## slow: the HasSynced comparison table over N random plans per subject (N, default 1000)
	@mkdir -p out
	CACHELAB_HASSYNCED=$${N:-1000} CACHELAB_HASSYNCED_HTML=$(CURDIR)/out/hassynced.html $(GO) test ./invariants -run TestHasSyncedComparison -v -timeout 60m

load-test: ## slow: 1,000 watchers and 4 writers over TLS on loopback
	CACHELAB_SLOW=1 $(GO) test ./fakeapi/serve -run TestLoad -v -timeout 20m

operator-e2e: ## the bellerophon binary against a cachelab serve process with faults (also part of make test)
	$(GO) test ./cmd/bellerophon -run TestOperatorConverges -v -count=1

openapi-record: ## re-record fakeapi/http/openapi/ from /tmp/realserver-openapi (fidelity/realserver/fetch-openapi.sh)
	CACHELAB_RECORD_OPENAPI=$${OPENAPI_DIR:-/tmp/realserver-openapi} $(GO) test ./fakeapi/http -run TestRecordOpenAPIDocuments -v -count=1

kubectl: ## build kubectl from source (k8s.io/kubernetes/cmd/kubectl, module proxy, cached outside the repo) for the kubectl tests
	fidelity/realserver/build-kubectl.sh

real-apiserver: ## slow: build a real kube-apiserver, kube-controller-manager and etcd (cached outside the repo)
	fidelity/realserver/build.sh

real-apiserver-start: real-apiserver ## start them on loopback (certs, token); writes /tmp/realserver.env
	fidelity/realserver/start.sh

real-apiserver-stop: ## stop the real server started by real-apiserver-start
	fidelity/realserver/stop.sh

bench-envtest: real-apiserver-start ## the lab beside envtest's real kube-apiserver + etcd: the same plans' user steps, per-plan wall and CPU (bench/envtest, docs/figures.md)
	CACHELAB_ENVTEST_BENCH=1 $(GO) test ./bench/envtest -run TestEnvtestSideBySide -v -count=1 -timeout 30m

fidelity-record: ## slow: re-record fidelity/testdata/transcripts from a real kube-apiserver (needs /tmp/realserver.env or KUBECONFIG)
	CACHELAB_FIDELITY_RECORD=1 $(GO) test ./fidelity -run TestRecordTranscriptsFromRealServer -v -count=1 -timeout 30m

operators: ## two real operators (KubeRay's RayCluster reconciler, Kueue's core controllers and scheduler; nested module operators/) under PLANS random plans each (default 100) drawn from their CRD schemas, from SEED if given; see docs/real-operators.md
	cd operators && $(GO) test -count=1 -timeout 30m ./... -rapid.checks=$${PLANS:-100} -rapid.shrinktime=30s $${SEED:+-rapid.seed=$$SEED}

image: ## cachelab's container image without a container daemon (go-containerregistry, nested module deploy/image): out/cachelab-image.tar, tagged cachelab:dev, for docker load, podman load or crane push
	cd deploy/image && $(GO) run ./cmd/build-image -root ../.. -o ../../out/cachelab-image.tar

image-test: ## builds the image, unpacks it, runs deploy/campaign-job.yaml's shards (3, as Indexed Job processes) and merge-job.yaml from its filesystem
	cd deploy/image && $(GO) test -count=1 -timeout 20m ./...

.PHONY: kube-strategies kube-strategies-test
kube-strategies: ## the cachelab binary with kube-apiserver's own strategies behind built-in kinds (nested module kubestrategies/, builds k8s.io/kubernetes packages): out/cachelab-kube; CACHELAB_KUBE_STRATEGIES=off runs it on the hand-written rules; see docs/kube-strategies.md
	cd kubestrategies && $(GO) build -o ../out/cachelab-kube ./cmd/cachelab

kube-strategies-test: ## kubestrategies' tests: the fidelity corpus with the hand-written rules and with the real strategies (scores of both), per-kind cases the real code gets right
	cd kubestrategies && $(GO) test -count=1 ./...

.PHONY: indexed-job-e2e
indexed-job-e2e: real-apiserver-start ## deploy/campaign-job.yaml's Indexed Job (8 plans) under the real Job controller on the real kube-apiserver, Pods run as local processes from the image's filesystem by a kubelet stand-in: completion indexes, a killed shard retried, a bad one failing its index, the merge Job (upstream/indexedjob, about 35 s; docs/scale-out.md)
	@cd upstream && { CACHELAB_INDEXEDJOB_E2E=1 $(GO) test ./indexedjob -v -count=1 -timeout 20m > /tmp/cachelab-indexedjob.log 2>&1; \
		st=$$?; grep -v -e '^[IW][0-9][0-9][0-9][0-9] ' /tmp/cachelab-indexedjob.log; echo "(the Job controller's log lines: /tmp/cachelab-indexedjob.log)"; exit $$st; }
