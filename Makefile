# The entry point for everything a contributor does. `make help` lists it.

GO          ?= go
export GOTOOLCHAIN := local
export GOFLAGS     := -mod=vendor
BIN         := bin
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMAGE       ?= csi-provisioner:$(VERSION)
LDFLAGS     := -s -w -X main.version=$(VERSION)
CACHE       := .cache

.PHONY: help build test test-unit verify vet fmt vendor image clean

help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## Build the sidecar into bin/csi-provisioner (static).
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/csi-provisioner ./cmd/csi-provisioner

test: verify test-unit ## Run every check and test (what CI runs).

test-unit: ## Unit and component tests, with the race detector.
	$(GO) test -race -count=1 ./...

verify: fmt vet ## gofmt and go vet.

fmt: ## Fail if a Go file is not gofmt'ed.
	@out=$$(gofmt -l cmd pkg test 2>/dev/null); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet: ## go vet.
	$(GO) vet ./...

vendor: ## Tidy go.mod, refresh vendor/ and verify the module cache.
	GOFLAGS=-mod=mod $(GO) mod tidy
	GOFLAGS=-mod=mod $(GO) mod vendor
	GOFLAGS=-mod=mod $(GO) mod verify

image: ## Build the container image (needs a Docker engine).
	docker build --build-arg VERSION=$(VERSION) -t $(IMAGE) .

clean: ## Remove build output (keeps the $(CACHE) of built tools).
	rm -rf $(BIN)
