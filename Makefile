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
UPSTREAM_VALIDATOR := $(TOOLS)/upstream-volume-data-source-validator
LINT_TOOLS  := $(TOOLS)/golangci-lint $(TOOLS)/logcheck
MONITORING_TOOLS := $(TOOLS)/promtool $(TOOLS)/promql-selectors
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
# PROGRESS turns `go build -v` output into a line every 200 packages, and
# passes through anything else (errors, downloads).
PROGRESS    := awk '/^[a-z0-9.-]+(\/[^ :]+)*$$/ { if (++n % 200 == 0) { print "   ... " n " packages compiled"; fflush() } next } { print; fflush() }'

.PHONY: help build test test-unit bench bench-smoke test-e2e tools demo demo-down webhook-certs generate verify verify-generated vet fmt lint vendor image clean

help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## Build the sidecar into bin/csi-provisioner, the validator into bin/volume-data-source-validator, the webhook into bin/snapshot-validation-webhook and the transfer controller into bin/storage-transfer-controller (static), and the local test driver.
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(BUILD_TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN)/csi-provisioner ./cmd/csi-provisioner
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(BUILD_TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN)/volume-data-source-validator ./cmd/volume-data-source-validator
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(BUILD_TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN)/snapshot-validation-webhook ./cmd/snapshot-validation-webhook
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(BUILD_TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN)/storage-transfer-controller ./cmd/storage-transfer-controller
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/csi-localdriver ./test/localdriver/cmd/csi-localdriver

tools: $(KUBE_TOOLS) $(SNAP_TOOLS) $(UPSTREAM) $(UPSTREAM_VALIDATOR) $(LINT_TOOLS) $(CODEGEN_TOOLS) $(MONITORING_TOOLS) $(CRDS)/.done ## Build the local control plane, snapshot controllers, upstream provisioner and validator, linters, code generators and Prometheus' promtool (cached in .cache/).

# kube-apiserver, kube-controller-manager and etcd of KUBE_VERSION from the
# Go module proxy, through the wrapper module KUBE_MODULE (k8s.io/kubernetes
# has replace directives and cannot be go-installed). The first build of a
# version takes minutes; each version keeps its own directory.
$(KUBE_TOOLS) &: $(KUBE_MODULE)/go.mod $(KUBE_MODULE)/go.sum $(KUBE_MODULE)/etcd/main.go
	@echo ">> building kube-apiserver, kube-controller-manager and etcd of Kubernetes $(KUBE_RELEASE) (first time: several minutes)"
	@mkdir -p $(KUBE_BIN)
	set -o pipefail; cd $(KUBE_MODULE) && GOFLAGS=-mod=mod $(GO) build -v -trimpath -o $(abspath $(KUBE_BIN))/ \
		-ldflags '-X k8s.io/component-base/version.gitVersion=$(KUBE_RELEASE)' \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager ./etcd 2>&1 | $(PROGRESS)
	@touch $(KUBE_TOOLS)

$(SNAP_TOOLS) &: test/tools/snapshotter/go.mod test/tools/snapshotter/go.sum
	@echo ">> building snapshot-controller and csi-snapshotter"
	set -o pipefail; cd test/tools/snapshotter && GOFLAGS=-mod=mod $(GO) build -v -trimpath -o $(abspath $(TOOLS))/ \
		github.com/kubernetes-csi/external-snapshotter/v8/cmd/snapshot-controller \
		github.com/kubernetes-csi/external-snapshotter/v8/cmd/csi-snapshotter 2>&1 | $(PROGRESS)
	@touch $(SNAP_TOOLS)

# The upstream kubernetes-csi external-provisioner, which the benchmark runs
# side by side with ours, through the wrapper module test/tools/upstream (the
# upstream module has replace directives too).
$(UPSTREAM): test/tools/upstream/go.mod test/tools/upstream/go.sum
	@echo ">> building upstream-csi-provisioner (external-provisioner $(UPSTREAM_VERSION))"
	@mkdir -p $(TOOLS)
	set -o pipefail; cd test/tools/upstream && GOFLAGS=-mod=mod $(GO) build -v -trimpath \
		-ldflags '-X main.version=$(UPSTREAM_VERSION)' -o $(abspath $@) \
		github.com/kubernetes-csi/external-provisioner/v6/cmd/csi-provisioner 2>&1 | $(PROGRESS)
	@touch $@

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
	set -o pipefail; cd test/tools/validator && GOFLAGS=-mod=mod $(GO) build -v -trimpath \
		-ldflags '-X main.version=$(UPSTREAM_VALIDATOR_VERSION)' -o $(abspath $@) \
		github.com/kubernetes-csi/volume-data-source-validator/cmd/volume-data-source-validator 2>&1 | $(PROGRESS)
	@touch $@

# golangci-lint and logcheck at the versions test/tools/lint pins.
$(LINT_TOOLS) &: test/tools/lint/go.mod test/tools/lint/go.sum
	@echo ">> building golangci-lint and logcheck"
	@mkdir -p $(TOOLS)
	set -o pipefail; cd test/tools/lint && GOFLAGS=-mod=mod $(GO) build -v -trimpath -o $(abspath $(TOOLS))/ \
		github.com/golangci/golangci-lint/v2/cmd/golangci-lint sigs.k8s.io/logtools/logcheck 2>&1 | $(PROGRESS)
	@touch $(LINT_TOOLS)

# The code generators of `make generate`: k8s.io/code-generator at the
# k8s.io/client-go version of go.mod, and controller-gen, at the versions
# test/tools/codegen pins.
$(CODEGEN_TOOLS) &: test/tools/codegen/go.mod test/tools/codegen/go.sum
	@echo ">> building deepcopy-gen, client-gen, lister-gen, informer-gen and controller-gen"
	@mkdir -p $(TOOLS)
	set -o pipefail; cd test/tools/codegen && GOFLAGS=-mod=mod $(GO) build -v -trimpath -o $(abspath $(TOOLS))/ \
		k8s.io/code-generator/cmd/deepcopy-gen k8s.io/code-generator/cmd/client-gen \
		k8s.io/code-generator/cmd/lister-gen k8s.io/code-generator/cmd/informer-gen \
		sigs.k8s.io/controller-tools/cmd/controller-gen 2>&1 | $(PROGRESS)
	@touch $(CODEGEN_TOOLS)

# promtool (Prometheus' rule checker and tester) at the version
# test/tools/monitoring pins, and promql-selectors, which lists the metrics
# and labels PromQL expressions use, with Prometheus' parser. Without the
# service discoveries (remove_all_sd): rule checks and tests need none,
# and their cloud SDKs are a large part of the build.
$(MONITORING_TOOLS) &: test/tools/monitoring/go.mod test/tools/monitoring/go.sum test/tools/monitoring/promql-selectors/main.go
	@echo "building promtool and promql-selectors (a few minutes the first time)"
	@mkdir -p $(TOOLS)
	set -o pipefail; cd test/tools/monitoring && GOFLAGS=-mod=mod $(GO) build -v -trimpath -tags remove_all_sd -o $(abspath $(TOOLS))/ \
		github.com/prometheus/prometheus/cmd/promtool ./promql-selectors 2>&1 | $(PROGRESS)
	@touch $(MONITORING_TOOLS)

# The CRDs the local cluster installs come from the modules the sidecar is
# built with, and the prometheus-operator's from its release (monitoring/).
$(CRDS)/.done: go.mod test/tools/snapshotter/go.mod
	@mkdir -p $(CRDS)/monitoring
	cp $$(GOFLAGS=-mod=mod $(GO) mod download -json github.com/kubernetes-csi/external-snapshotter/client/v8 | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p')/config/crd/*snapshot.storage.k8s.io_*.yaml $(CRDS)/
	cp $$(GOFLAGS=-mod=mod $(GO) mod download -json sigs.k8s.io/gateway-api | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p')/config/crd/standard/gateway.networking.k8s.io_referencegrants.yaml $(CRDS)/
	cp $$(GOFLAGS=-mod=mod $(GO) mod download -json github.com/prometheus-operator/prometheus-operator@$(PROMETHEUS_OPERATOR_VERSION) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p')/example/prometheus-operator-crd/monitoring.coreos.com_{podmonitors,servicemonitors,prometheusrules}.yaml $(CRDS)/monitoring/
	@chmod u+w $(CRDS)/*.yaml $(CRDS)/monitoring/*.yaml
	@touch $@

test: verify test-unit test-monitoring test-fuzz bench-smoke test-e2e test-faults ## Run every check and test (what CI runs).

.PHONY: test-monitoring
test-monitoring: $(MONITORING_TOOLS) ## deploy/overlays/monitoring with Prometheus' promtool: the rules parse, each alert fires and resolves (test/monitoring/rules_test.yaml), each has a runbook in docs/monitoring.md, the dashboard's queries parse.
	$(GO) test -tags monitoring -count=1 ./test/monitoring/

bench-smoke: build tools ## Run every Go benchmark once, and make bench's throughput, latency and API cost measurements with 2 claims each, its validator measurement with 20, its webhook measurement for 2 s at 20/s and its transfer measurement with one transfer of each kind and 2 at once, and its memory measurement once at 20 and 40 objects, as a smoke test (no timing is checked).
	$(GO) test -run '^$$' -bench . -benchtime=1x ./pkg/... ./internal/... ./test/...
	$(GO) run ./test/bench -smoke -setups default
	$(GO) run ./test/bench/validator -claims 20 -grants 20 -namespaces 4 -runs 1
	$(GO) run ./test/bench/webhook -smoke
	$(GO) run ./test/bench/transfer -smoke -concurrent 2

test-unit: ## Unit and component tests, with the race detector.
	$(GO) test -race -count=1 ./...

# Each fuzz target's time; the unit tests already run their seed corpora.
FUZZTIME ?= 10s

.PHONY: test-fuzz
test-fuzz: ## Run every Go fuzz target under internal/ and pkg/ for FUZZTIME each (10s; hack/fuzz.sh lists them).
	GO='$(GO)' FUZZTIME=$(FUZZTIME) hack/fuzz.sh

test-e2e: build tools ## End-to-end suite on a real local control plane (one case: E2E_RUN=TestE2E/Story1; the oldest supported Kubernetes: KUBE_VERSION=1.36).
	$(GO) test -tags e2e -count=1 -timeout 30m -v ./test/e2e/ $(if $(E2E_RUN),-run '$(E2E_RUN)') 2>&1 | tee $(CACHE)/e2e.log | grep -E '^(=== RUN|--- |\s+---|PASS|FAIL|ok|e2e:)|_test.go:'; exit $${PIPESTATUS[0]}

.PHONY: test-faults
test-faults: build tools ## Fault-injection suite on the local control plane: driver, sidecar, kube-apiserver and etcd killed mid-burst, grant churn, socket loss, each reconciled against the driver's state (one scenario: FAULTS_RUN=TestGrantChurn; docs/reliability.md).
	$(GO) test -tags faults -count=1 -timeout 15m -v ./test/faults/ $(if $(FAULTS_RUN),-run '$(FAULTS_RUN)') 2>&1 | tee $(CACHE)/faults.log | grep -E '^(=== RUN|--- |\s+---|PASS|FAIL|ok|faults:)|_test.go:'; exit $${PIPESTATUS[0]}

# The memory measurement's sizes: objects of each kind in the cluster.
BENCH_OBJECTS ?= 5000,20000,50000

bench: build tools ## Measure throughput, latency, API cost and memory on the local cluster, the validator's cost next to upstream's, the webhook under load and namespace transfers from accept to Completed (memory at BENCH_OBJECTS=5000,20000,50000 objects of each kind, with the growth per 10,000 and the time to ready; see docs/benchmarks.md; BENCH_CLAIMS=link,cross-namespace picks the kinds of claim).
	@mkdir -p $(CACHE)
	$(GO) run ./test/bench -out $(CACHE)/bench-results.md $(if $(BENCH_SIZES),-sizes $(BENCH_SIZES)) -objects $(BENCH_OBJECTS) $(if $(BENCH_CLAIMS),-claims $(BENCH_CLAIMS))
	$(GO) test -run '^$$' -bench BenchmarkCheck -benchmem ./internal/shared/referencegrant/ | tee -a $(CACHE)/bench-results.md
	$(GO) run ./test/bench/validator -out $(CACHE)/bench-validator.md
	$(GO) run ./test/bench/webhook -out $(CACHE)/bench-webhook.md
	$(GO) run ./test/bench/transfer -out $(CACHE)/bench-transfer.md

.PHONY: soak
soak: build tools ## Soak the sidecar for 10 minutes (SOAK_DURATION=3m) under claim, grant and snapshot churn, then reconcile and report unauthorized provisions, leaks, finalizers left, RSS, goroutines and grant->PV latency (docs/reliability.md); not part of make test.
	@mkdir -p $(CACHE)
	$(GO) run ./test/soak -out $(CACHE)/soak-results.md $(if $(SOAK_DURATION),-duration $(SOAK_DURATION))

demo: build tools ## Play KEP-3294 Story 1 on a local cluster (LINK=1: through a VolumeSnapshotLink, without alpha gates; KEEP=1 keeps it running).
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
