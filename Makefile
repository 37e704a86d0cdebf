# The entry point for everything a contributor does. `make help` lists it.

GO          ?= go
SHELL       := /bin/bash
export GOTOOLCHAIN := local
export GOFLAGS     := -mod=vendor
BIN         := bin
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMAGE       ?= ghcr.io/xns-csi/csi-provisioner:$(VERSION)
LDFLAGS     := -s -w -X main.version=$(VERSION)
CACHE       := .cache
# The tools of .cache/bin are built with hack/build-tool.sh, which runs go
# build in their wrapper module and appends each build's time to
# $(TIMINGS) when it is set (.ci/run prints them).
BUILD_TOOL  := GO='$(GO)' hack/build-tool.sh
# gRPC's golang.org/x/net/trace, through html/template, keeps every
# exported method of a program in its binary. Nothing here uses gRPC's
# tracing (grpc.EnableTracing), so grpcnotrace drops it: the sidecar's and
# the webhook's binaries shrink from about 66 MB to 37 MB, the validator's
# by half, and each maps that much less code (docs/benchmarks.md). The
# Dockerfile builds them alike.
BUILD_TAGS := grpcnotrace

TOOLS       := $(CACHE)/bin
# The Kubernetes minor version of the local control plane (make test-e2e
# KUBE_VERSION=1.36 runs the oldest supported one): its etcd,
# kube-apiserver and kube-controller-manager are built from test/tools/kube
# (the newest) or test/tools/kube-<minor> into $(TOOLS)/kube-<minor>/, and
# test/cluster runs them from the directory XNS_KUBE_BIN names.
KUBE_DEFAULT_VERSION := 1.37
KUBE_VERSION ?= $(KUBE_DEFAULT_VERSION)
KUBE_MODULE := test/tools/kube$(if $(filter-out $(KUBE_DEFAULT_VERSION),$(KUBE_VERSION)),-$(KUBE_VERSION))
KUBE_BIN    := $(TOOLS)/kube-$(KUBE_VERSION)
KUBE_TOOLS  := $(KUBE_BIN)/etcd $(KUBE_BIN)/kube-apiserver $(KUBE_BIN)/kube-controller-manager
export XNS_KUBE_BIN := $(abspath $(KUBE_BIN))
# The Kubernetes release KUBE_MODULE pins, stamped into the binaries' --version.
KUBE_RELEASE = $(lastword $(shell grep -o 'k8s.io/kubernetes v[^ ]*' $(KUBE_MODULE)/go.mod))
SNAP_TOOLS  := $(TOOLS)/snapshot-controller $(TOOLS)/csi-snapshotter
UPSTREAM    := $(TOOLS)/upstream-csi-provisioner
# Upstream's csi-provisioner with test/compat/testdata/flagdump compiled in:
# its --help lists each flag's type and default (make update-compat-fixtures).
UPSTREAM_FLAGDUMP := $(TOOLS)/upstream-csi-provisioner-flagdump
UPSTREAM_VALIDATOR := $(TOOLS)/upstream-volume-data-source-validator
LINT_TOOLS  := $(TOOLS)/golangci-lint $(TOOLS)/logcheck
PROMTOOL    := $(TOOLS)/promtool
PROMQL_SELECTORS := $(TOOLS)/promql-selectors
MONITORING_TOOLS := $(PROMTOOL) $(PROMQL_SELECTORS)
# The prometheus-operator release whose API go.mod pins (test/manifests
# decodes the PodMonitors and PrometheusRule with it); its CRDs are
# installed from the same release.
PROMETHEUS_OPERATOR_VERSION = $(lastword $(shell grep -o 'prometheus-operator/pkg/apis/monitoring v[^ ]*' go.mod))
CODEGEN_TOOLS := $(TOOLS)/deepcopy-gen $(TOOLS)/client-gen $(TOOLS)/lister-gen $(TOOLS)/informer-gen $(TOOLS)/controller-gen
# The upstream release test/tools/upstream pins, stamped into its --version.
UPSTREAM_VERSION = $(lastword $(shell grep -o 'external-provisioner/v6 v[^ ]*' test/tools/upstream/go.mod))
# The upstream validator release test/tools/validator pins, and the
# apimachinery it is built with.
UPSTREAM_VALIDATOR_VERSION = $(lastword $(shell grep -o 'volume-data-source-validator v[^ ]*' test/tools/validator/go.mod))
UPSTREAM_VALIDATOR_APIMACHINERY = $(lastword $(shell grep -o 'k8s.io/apimachinery v[^ ]*' test/tools/validator/go.mod))
# Our VolumePopulator API, which stands in for upstream's client module.
POPULATOR_API := $(addprefix pkg/apis/populator/v1beta1/,doc.go register.go types.go zz_generated.deepcopy.go)
VALIDATOR_CLIENT := $(CACHE)/validator-client
CRDS        := $(CACHE)/crds
# module_dir is the shell text for the directory of module $(2) (path or
# path@version) in the module cache, downloaded if need be, at the version
# the module in directory $(1) requires.
module_dir = $$(cd $(1) && GOFLAGS=-mod=mod $(GO) mod download -json $(2) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p')
# A target depends on the tools it runs and no others. A local cluster
# (test/localenv: make demo, test-e2e, test-faults, bench-smoke, soak) runs
# the control plane and the snapshot controllers, and installs the CRDs.
# The upstream provisioner and validator are built by make bench (and make
# tools) only.
CLUSTER_TOOLS := $(KUBE_TOOLS) $(SNAP_TOOLS) $(CRDS)/.done
# The checks of make test, one by one (.ci/run times each), and the tools
# they run.
TEST_TARGETS := verify test-unit test-monitoring test-fuzz bench-smoke test-e2e test-faults
# The control plane first: with the snapshotter after it, it is the longest
# chain of builds.
TEST_TOOLS  := $(CLUSTER_TOOLS) $(LINT_TOOLS) $(MONITORING_TOOLS) $(CODEGEN_TOOLS)
# parallel makes its arguments $(TOOL_JOBS) at a time (unless this make
# runs with -j already): a target that runs several binaries and tools
# starts its recipe with them. Two go builds side by side keep both cores
# busy while one downloads modules or links.
TOOL_JOBS   ?= 2
parallel     = +@$(MAKE) --no-print-directory $(if $(filter -j% --jobserver%,$(MAKEFLAGS)),,-j$(TOOL_JOBS)) PARALLEL_GOALS='$(1)' parallel-goals

.PHONY: help build test test-tools test-targets test-unit bench bench-smoke test-e2e tools demo demo-down webhook-certs generate verify verify-generated vet fmt lint vendor image clean update-compat-fixtures

help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-24s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## Build the sidecar into bin/csi-provisioner, the validator into bin/volume-data-source-validator, the webhook into bin/snapshot-validation-webhook and the transfer controller into bin/storage-transfer-controller (static), and the local test driver.
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(BUILD_TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN)/csi-provisioner ./cmd/csi-provisioner
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(BUILD_TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN)/volume-data-source-validator ./cmd/volume-data-source-validator
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(BUILD_TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN)/snapshot-validation-webhook ./cmd/snapshot-validation-webhook
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(BUILD_TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN)/storage-transfer-controller ./cmd/storage-transfer-controller
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/csi-localdriver ./test/localdriver/cmd/csi-localdriver

tools: $(KUBE_TOOLS) $(SNAP_TOOLS) $(UPSTREAM) $(UPSTREAM_VALIDATOR) $(LINT_TOOLS) $(CODEGEN_TOOLS) $(MONITORING_TOOLS) $(CRDS)/.done ## Build every tool: the local control plane, snapshot controllers, upstream provisioner and validator, linters, code generators and Prometheus' promtool (cached in .cache/; each target builds only those it runs).

test-tools: $(TEST_TOOLS) ## Build the tools make test runs (not the upstream provisioner and validator); make -j2 test-tools builds two at a time, as .ci/run does.

test-targets: # The checks of make test, for .ci/run.
	@echo $(TEST_TARGETS)

# What $(call parallel,...) makes, quietly when it is all built.
.PHONY: parallel-goals
parallel-goals: $(PARALLEL_GOALS)
	@:

# kube-apiserver, kube-controller-manager and etcd of KUBE_VERSION from the
# Go module proxy, through the wrapper module KUBE_MODULE (k8s.io/kubernetes
# has replace directives and cannot be go-installed). The first build of a
# version takes minutes; each version keeps its own directory.
$(KUBE_TOOLS) &: $(KUBE_MODULE)/go.mod $(KUBE_MODULE)/go.sum $(KUBE_MODULE)/etcd/main.go
	@echo ">> building kube-apiserver, kube-controller-manager and etcd of Kubernetes $(KUBE_RELEASE) (first time: several minutes)"
	@mkdir -p $(KUBE_BIN)
	$(BUILD_TOOL) kube-$(KUBE_VERSION) $(KUBE_MODULE) $(abspath $(KUBE_BIN))/ \
		-ldflags '-X k8s.io/component-base/version.gitVersion=$(KUBE_RELEASE)' \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager ./etcd
	@touch $(KUBE_TOOLS)

# After the control plane: test/tools/snapshotter requires the modules it
# shares with test/tools/kube at the same versions (hack/align-tool-modules.sh),
# so most of its packages are already in the build cache then.
$(SNAP_TOOLS) &: test/tools/snapshotter/go.mod test/tools/snapshotter/go.sum | $(KUBE_TOOLS)
	@echo ">> building snapshot-controller and csi-snapshotter"
	@mkdir -p $(TOOLS)
	$(BUILD_TOOL) snapshotter test/tools/snapshotter $(abspath $(TOOLS))/ \
		github.com/kubernetes-csi/external-snapshotter/v8/cmd/snapshot-controller \
		github.com/kubernetes-csi/external-snapshotter/v8/cmd/csi-snapshotter
	@touch $(SNAP_TOOLS)

# The upstream kubernetes-csi external-provisioner, which the benchmark runs
# side by side with ours, through the wrapper module test/tools/upstream (the
# upstream module has replace directives too).
$(UPSTREAM): test/tools/upstream/go.mod test/tools/upstream/go.sum
	@echo ">> building upstream-csi-provisioner (external-provisioner $(UPSTREAM_VERSION))"
	@mkdir -p $(TOOLS)
	$(BUILD_TOOL) upstream test/tools/upstream $(abspath $@) -ldflags '-X main.version=$(UPSTREAM_VERSION)' \
		github.com/kubernetes-csi/external-provisioner/v6/cmd/csi-provisioner
	@touch $@

# The same main package with test/compat/testdata/flagdump/flagdump.go added,
# copied into $(FLAGDUMP_SRC) with test/tools/upstream's go.mod (a module's
# source in the module cache cannot be added to): after $(UPSTREAM), only
# that package and the link are built again.
FLAGDUMP_SRC := $(CACHE)/upstream-flagdump
$(UPSTREAM_FLAGDUMP): test/tools/upstream/go.mod test/tools/upstream/go.sum test/compat/testdata/flagdump/flagdump.go | $(UPSTREAM)
	@rm -rf $(FLAGDUMP_SRC) && mkdir -p $(FLAGDUMP_SRC)
	cp $(call module_dir,test/tools/upstream,github.com/kubernetes-csi/external-provisioner/v6)/cmd/csi-provisioner/*.go \
		test/tools/upstream/go.mod test/tools/upstream/go.sum test/compat/testdata/flagdump/flagdump.go $(FLAGDUMP_SRC)/
	@rm -f $(FLAGDUMP_SRC)/*_test.go && chmod u+w $(FLAGDUMP_SRC)/*
	$(BUILD_TOOL) upstream-flagdump $(FLAGDUMP_SRC) $(abspath $@) -ldflags '-X main.version=$(UPSTREAM_VERSION)' .
	@touch $@

update-compat-fixtures: $(UPSTREAM) $(UPSTREAM_FLAGDUMP) ## Build upstream's csi-provisioner at the release test/tools/upstream pins and write test/compat's fixtures of its flags and feature gates from it.
	$(GO) test -count=1 -run '^TestUpdateFixtures$$' -v ./test/compat/ -args -update

# The upstream kubernetes-csi volume-data-source-validator, which the
# benchmark runs side by side with ours, through the wrapper module
# test/tools/validator. Its client module is not on the module proxy; the
# wrapper replaces it with $(VALIDATOR_CLIENT), written here from our
# pkg/apis/populator/v1beta1 (the same API), so no copy is kept in the
# repository and it cannot go stale.
$(UPSTREAM_VALIDATOR): test/tools/validator/go.mod test/tools/validator/go.sum $(POPULATOR_API)
	@echo ">> building upstream-volume-data-source-validator ($(UPSTREAM_VALIDATOR_VERSION))"
	@rm -rf $(VALIDATOR_CLIENT) && mkdir -p $(VALIDATOR_CLIENT)/apis/volumepopulator/v1beta1 $(TOOLS)
	cp $(POPULATOR_API) $(VALIDATOR_CLIENT)/apis/volumepopulator/v1beta1/
	printf 'module github.com/kubernetes-csi/volume-data-source-validator/client\n\ngo 1.26.0\n\nrequire k8s.io/apimachinery %s\n' \
		$(UPSTREAM_VALIDATOR_APIMACHINERY) > $(VALIDATOR_CLIENT)/go.mod
	$(BUILD_TOOL) upstream-validator test/tools/validator $(abspath $@) -ldflags '-X main.version=$(UPSTREAM_VALIDATOR_VERSION)' \
		github.com/kubernetes-csi/volume-data-source-validator/cmd/volume-data-source-validator
	@touch $@

# golangci-lint and logcheck at the versions test/tools/lint pins.
$(LINT_TOOLS) &: test/tools/lint/go.mod test/tools/lint/go.sum
	@echo ">> building golangci-lint and logcheck"
	@mkdir -p $(TOOLS)
	$(BUILD_TOOL) lint test/tools/lint $(abspath $(TOOLS))/ \
		github.com/golangci/golangci-lint/v2/cmd/golangci-lint sigs.k8s.io/logtools/logcheck
	@touch $(LINT_TOOLS)

# The code generators of `make generate`: k8s.io/code-generator at the
# k8s.io/client-go version of go.mod, and controller-gen, at the versions
# test/tools/codegen pins.
$(CODEGEN_TOOLS) &: test/tools/codegen/go.mod test/tools/codegen/go.sum
	@echo ">> building deepcopy-gen, client-gen, lister-gen, informer-gen and controller-gen"
	@mkdir -p $(TOOLS)
	$(BUILD_TOOL) codegen test/tools/codegen $(abspath $(TOOLS))/ \
		k8s.io/code-generator/cmd/deepcopy-gen k8s.io/code-generator/cmd/client-gen \
		k8s.io/code-generator/cmd/lister-gen k8s.io/code-generator/cmd/informer-gen \
		sigs.k8s.io/controller-tools/cmd/controller-gen
	@touch $(CODEGEN_TOOLS)

# promtool (Prometheus' rule checker and tester) at the version
# test/tools/monitoring pins. Without the service discoveries
# (remove_all_sd): rule checks and tests need none, and their cloud SDKs
# are a large part of the build.
$(PROMTOOL): test/tools/monitoring/go.mod test/tools/monitoring/go.sum
	@echo ">> building promtool (a few minutes the first time)"
	@mkdir -p $(TOOLS)
	$(BUILD_TOOL) promtool test/tools/monitoring $(abspath $@) -tags remove_all_sd github.com/prometheus/prometheus/cmd/promtool
	@touch $@

# promql-selectors, which lists the metrics and labels PromQL expressions
# use, with Prometheus' parser (make test-monitoring and test-e2e), built
# apart from promtool: it is a small part of it.
$(PROMQL_SELECTORS): test/tools/monitoring/go.mod test/tools/monitoring/go.sum test/tools/monitoring/promql-selectors/main.go
	@mkdir -p $(TOOLS)
	$(BUILD_TOOL) promql-selectors test/tools/monitoring $(abspath $@) ./promql-selectors
	@touch $@

# The CRDs the local cluster installs come from the modules the sidecar is
# built with, and the prometheus-operator's from its release (monitoring/).
$(CRDS)/.done: go.mod test/tools/snapshotter/go.mod
	@mkdir -p $(CRDS)/monitoring
	cp $(call module_dir,.,github.com/kubernetes-csi/external-snapshotter/client/v8)/config/crd/*snapshot.storage.k8s.io_*.yaml $(CRDS)/
	cp $(call module_dir,.,sigs.k8s.io/gateway-api)/config/crd/standard/gateway.networking.k8s.io_referencegrants.yaml $(CRDS)/
	cp $(call module_dir,.,github.com/prometheus-operator/prometheus-operator@$(PROMETHEUS_OPERATOR_VERSION))/example/prometheus-operator-crd/monitoring.coreos.com_{podmonitors,servicemonitors,prometheusrules}.yaml $(CRDS)/monitoring/
	@chmod u+w $(CRDS)/*.yaml $(CRDS)/monitoring/*.yaml
	@touch $@

test: $(TEST_TARGETS) ## Run every check and test (what CI runs: .ci/run).

.PHONY: test-monitoring
test-monitoring: ## deploy/overlays/monitoring with Prometheus' promtool: the rules parse, each alert fires and resolves (test/monitoring/rules_test.yaml), each has a runbook in docs/monitoring.md, the dashboard's queries parse.
	$(call parallel,$(MONITORING_TOOLS))
	$(GO) test -tags monitoring -count=1 ./test/monitoring/

bench-smoke: ## Run every Go benchmark once, and make bench's throughput, latency and API cost measurements with 2 claims each, its validator measurement with 20, its webhook measurement for 2 s at 20/s and its transfer measurement with one transfer of each kind and 2 at once, and its memory measurement once at 20 and 40 objects, as a smoke test (no timing is checked; ours alone: the upstream provisioner and validator are not built or run).
	$(call parallel,build $(CLUSTER_TOOLS))
	$(GO) test -run '^$$' -bench . -benchtime=1x ./pkg/... ./internal/... ./test/...
	$(GO) run ./test/bench -smoke -setups default -upstream=false
	$(GO) run ./test/bench/validator -claims 20 -grants 20 -namespaces 4 -runs 1 -upstream=false
	$(GO) run ./test/bench/webhook -smoke
	$(GO) run ./test/bench/transfer -smoke -concurrent 2

test-unit: ## Unit and component tests, with the race detector.
	$(GO) test -race -count=1 ./...

# Each fuzz target's time; the unit tests already run their seed corpora.
FUZZTIME ?= 10s

.PHONY: test-fuzz
test-fuzz: ## Run every Go fuzz target under internal/ and pkg/ for FUZZTIME each (10s; hack/fuzz.sh lists them).
	GO='$(GO)' FUZZTIME=$(FUZZTIME) hack/fuzz.sh

test-e2e: ## End-to-end suite on a real local control plane (one case: E2E_RUN=TestE2E/Story1; the oldest supported Kubernetes: KUBE_VERSION=1.36).
	$(call parallel,build $(CLUSTER_TOOLS) $(PROMQL_SELECTORS))
	$(GO) test -tags e2e -count=1 -timeout 30m -v ./test/e2e/ $(if $(E2E_RUN),-run '$(E2E_RUN)') 2>&1 | tee $(CACHE)/e2e.log | grep -E '^(=== RUN|--- |\s+---|PASS|FAIL|ok|e2e:)|_test.go:'; exit $${PIPESTATUS[0]}

.PHONY: test-faults
test-faults: ## Fault-injection suite on the local control plane: driver, sidecar, kube-apiserver and etcd killed mid-burst, grant churn, socket loss, each reconciled against the driver's state (one scenario: FAULTS_RUN=TestGrantChurn; docs/reliability.md).
	$(call parallel,build $(CLUSTER_TOOLS))
	$(GO) test -tags faults -count=1 -timeout 15m -v ./test/faults/ $(if $(FAULTS_RUN),-run '$(FAULTS_RUN)') 2>&1 | tee $(CACHE)/faults.log | grep -E '^(=== RUN|--- |\s+---|PASS|FAIL|ok|faults:)|_test.go:'; exit $${PIPESTATUS[0]}

# The memory measurement's sizes: objects of each kind in the cluster.
BENCH_OBJECTS ?= 5000,20000,50000

bench: ## Measure throughput, latency, API cost and memory on the local cluster, the validator's cost next to upstream's, the webhook under load and namespace transfers from accept to Completed (memory at BENCH_OBJECTS=5000,20000,50000 objects of each kind, with the growth per 10,000 and the time to ready; see docs/benchmarks.md; BENCH_CLAIMS=link,cross-namespace picks the kinds of claim). Builds the upstream provisioner and validator.
	$(call parallel,build $(CLUSTER_TOOLS) $(UPSTREAM) $(UPSTREAM_VALIDATOR))
	$(GO) run ./test/bench -out $(CACHE)/bench-results.md $(if $(BENCH_SIZES),-sizes $(BENCH_SIZES)) -objects $(BENCH_OBJECTS) $(if $(BENCH_CLAIMS),-claims $(BENCH_CLAIMS))
	$(GO) test -run '^$$' -bench BenchmarkCheck -benchmem ./internal/shared/referencegrant/ | tee -a $(CACHE)/bench-results.md
	$(GO) run ./test/bench/validator -out $(CACHE)/bench-validator.md
	$(GO) run ./test/bench/webhook -out $(CACHE)/bench-webhook.md
	$(GO) run ./test/bench/transfer -out $(CACHE)/bench-transfer.md

.PHONY: soak
soak: ## Soak the sidecar for 10 minutes (SOAK_DURATION=3m) under claim, grant and snapshot churn, then reconcile and report unauthorized provisions, leaks, finalizers left, RSS, goroutines and grant->PV latency (docs/reliability.md); not part of make test.
	$(call parallel,build $(CLUSTER_TOOLS))
	$(GO) run ./test/soak -out $(CACHE)/soak-results.md $(if $(SOAK_DURATION),-duration $(SOAK_DURATION))

demo: ## Play KEP-3294 Story 1 on a local cluster (LINK=1: through a VolumeSnapshotLink, without alpha gates; KEEP=1 keeps it running).
	$(call parallel,build $(CLUSTER_TOOLS))
	$(GO) run ./test/demo $(if $(KEEP),-keep) $(if $(LINK),-link)

demo-down: ## Stop a demo cluster left behind (e.g. after kill -9).
	-pkill -f '$(subst .cache,[.]cache,$(abspath $(CACHE)))/demo' || true
	rm -rf $(CACHE)/demo

webhook-certs: ## The snapshot validation webhook's CA (reused when it exists) and a serving pair it issues, with openssl: the Secrets and caBundle of deploy/webhook (NAMESPACE=default; OUT_DIR=<dir> keeps the files, NO_KUBECTL=1 only writes them, ROTATE_CA=1 makes a new CA).
	hack/webhook-certs.sh $(or $(NAMESPACE),default)

generate: $(CODEGEN_TOOLS) ## Regenerate deepcopy, clientset, listers, informers (pkg/generated) and CRD YAML (deploy/crds/generated) from pkg/apis.
	CODEGEN_BIN=$(abspath $(TOOLS)) hack/update-codegen.sh

verify: verify-generated fmt vet lint ## Generated files up to date, gofmt, go vet and the linters.

verify-generated: $(CODEGEN_TOOLS) ## Fail if a file `make generate` writes is stale (regenerated in a temporary copy; the tree is not changed).
	CODEGEN_BIN=$(abspath $(TOOLS)) hack/verify-codegen.sh

fmt: ## Fail if a Go file is not gofmt'ed.
	@out=$$(gofmt -l cmd pkg test 2>/dev/null); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet: ## go vet.
	$(GO) vet ./...

lint: $(LINT_TOOLS) ## golangci-lint (hack/golangci.yml) and logcheck for structured, contextual logging (hack/logcheck.conf).
	$(TOOLS)/golangci-lint run --config hack/golangci.yml ./...
	$(TOOLS)/logcheck -check-contextual -check-value -config hack/logcheck.conf ./...

vendor: ## Tidy go.mod, refresh vendor/ and verify the module cache.
	GOFLAGS=-mod=mod $(GO) mod tidy
	GOFLAGS=-mod=mod $(GO) mod vendor
	GOFLAGS=-mod=mod $(GO) mod verify

image: ## Build the container image (needs a Docker engine).
	docker build --build-arg VERSION=$(VERSION) -t $(IMAGE) .

clean: ## Remove build output (keeps the $(CACHE) of built tools).
	rm -rf $(BIN)
