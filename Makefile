# App Operator. `make help` lists the targets. The names and variables follow the operator-sdk
# scaffold (VERSION, CHANNELS, DEFAULT_CHANNEL, IMAGE_TAG_BASE, IMG, BUNDLE_IMG, CATALOG_IMG, ...).

# The release the bundle describes: the newest in catalog/releases.yaml, which also decides its
# date, the release it replaces and its skipRange (docs/releases.md).
VERSION ?= $(shell awk '$$1 == "-" && $$2 == "version:" { v = $$3 } END { print v }' catalog/releases.yaml)

# The channels the release is published in (comma separated), and the package's default one:
# make bundle CHANNELS=fast,stable DEFAULT_CHANNEL=stable
CHANNELS ?= stable
DEFAULT_CHANNEL ?= stable
BUNDLE_CHANNELS := --channels=$(CHANNELS)
BUNDLE_DEFAULT_CHANNEL := --default-channel=$(DEFAULT_CHANNEL)
BUNDLE_METADATA_OPTS ?= $(BUNDLE_CHANNELS) $(BUNDLE_DEFAULT_CHANNEL)

# Every image is named after IMAGE_TAG_BASE and tagged v$(VERSION).
IMAGE_TAG_BASE ?= quay.io/mycompany/app-operator
IMG ?= $(IMAGE_TAG_BASE):v$(VERSION)
BUNDLE_IMG ?= $(IMAGE_TAG_BASE)-bundle:v$(VERSION)
CATALOG_IMG ?= $(IMAGE_TAG_BASE)-catalog:v$(VERSION)
SCORECARD_IMG ?= $(IMAGE_TAG_BASE)-scorecard:v$(VERSION)
BUNDLE_GEN_FLAGS ?= --version $(VERSION) $(BUNDLE_METADATA_OPTS) --image $(IMG) --scorecard-image $(SCORECARD_IMG)
# USE_IMAGE_DIGESTS=true names the manager by the digest of the image make images built.
USE_IMAGE_DIGESTS ?= false
ifeq ($(USE_IMAGE_DIGESTS), true)
	BUNDLE_GEN_FLAGS += --use-image-digests --images $(IMAGES_DIR)
endif
# make images writes an OCI image layout here; make images-push pushes it to REGISTRY.
IMAGES_DIR ?= $(CURDIR)/_output/images
CONTAINER_TOOL ?= docker

SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

# Every tool is built from a pinned module under hack/tools into bin/, once, and again only
# when its pin changes. Nothing is downloaded from anywhere but the Go module proxy.
LOCALBIN ?= $(CURDIR)/bin
export PATH := $(LOCALBIN):$(PATH)
# envtest runs the kube-apiserver and etcd built here.
export KUBEBUILDER_ASSETS := $(LOCALBIN)

CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
KUSTOMIZE ?= $(LOCALBIN)/kustomize
KUBECTL ?= $(LOCALBIN)/kubectl
OPM ?= $(LOCALBIN)/opm
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint

# The tests of the local cluster, the end-to-end suites and the benchmark are a module of their
# own (test/go.mod), so that what only they need stays out of the manager's module.
TEST_MODULE := test
GO_TEST_FLAGS ?= -count=1

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate the CRD, RBAC role and webhook configurations from the code's markers.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd webhook paths="./..." output:crd:artifacts:config=config/crd/bases

.PHONY: generate
generate: controller-gen ## Generate the DeepCopy methods of the API types.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## Run go fmt on both modules.
	go fmt ./...
	cd $(TEST_MODULE) && go fmt ./...

.PHONY: vet
vet: ## Run go vet on both modules.
	go vet ./...
	cd $(TEST_MODULE) && go vet ./...

.PHONY: lint
lint: golangci-lint ## Run golangci-lint (.golangci.yml) on both modules.
	$(GOLANGCI_LINT) run ./...
	cd $(TEST_MODULE) && $(GOLANGCI_LINT) run --config ../.golangci.yml ./...

.PHONY: lint-fix
lint-fix: golangci-lint ## Run golangci-lint and let it fix what it can.
	$(GOLANGCI_LINT) run --fix ./...
	cd $(TEST_MODULE) && $(GOLANGCI_LINT) run --fix --config ../.golangci.yml ./...

.PHONY: verify
verify: manifests generate bundle catalog ## Fail when generated files (code, manifests, bundle, catalog) or formatting differ from what is committed.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt would change:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@git diff --exit-code -- api config bundle bundle.Dockerfile catalog || { echo "generated files are out of date: run make manifests generate bundle catalog and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- api config bundle catalog)" || { echo "generated files are not committed:"; git status --porcelain -- api config bundle catalog; exit 1; }
	go vet ./...
	cd $(TEST_MODULE) && go vet ./...

.PHONY: test
test: verify lint test-unit test-e2e ## Run every check and test: generated files, lint, unit and envtest integration tests, fuzz seeds, bundle validation, and the e2e suites with the real OLM.

.PHONY: test-unit
test-unit: tools-envtest $(LOCALBIN)/promtool ## Run unit tests, envtest integration tests (a real kube-apiserver and etcd), bundle, security and alert tests.
	go test $(GO_TEST_FLAGS) ./...
	cd $(TEST_MODULE) && go test $(GO_TEST_FLAGS) $$(go list ./... | grep -v -e /e2e -e /upgrade -e /chaos)

FUZZTIME ?= 5m
.PHONY: fuzz
fuzz: ## Fuzz defaulting, validation and conversion, FUZZTIME each (default 5m).
	go test ./api/v1 -run '^$$' -fuzz '^FuzzDefaulting$$' -fuzztime $(FUZZTIME)
	go test ./api/v1 -run '^$$' -fuzz '^FuzzValidation$$' -fuzztime $(FUZZTIME)
	go test ./api/v1alpha1 -run '^$$' -fuzz '^FuzzConversion$$' -fuzztime $(FUZZTIME)

##@ Build

.PHONY: build
build: ## Build the manager into bin/manager and the scorecard tests into bin/app-scorecard.
	go build -o $(LOCALBIN)/manager ./cmd
	go build -o $(LOCALBIN)/app-scorecard ./scorecard

.PHONY: run
run: manifests generate ## Run the manager from your host against the cluster in your kubeconfig.
	go run ./cmd --metrics-secure=false --webhook-cert-path=$(CURDIR)/.cache/webhook-certs

.PHONY: docker-build
docker-build: ## Build the manager image with a container engine.
	$(CONTAINER_TOOL) build -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the manager image with a container engine.
	$(CONTAINER_TOOL) push $(IMG)

##@ Local cluster with OLM

.PHONY: demo
demo: tools build localcluster node-packages ## Start a local control plane with OLM, install App Operator from catalog/ and run a sample App.
	$(LOCALBIN)/localcluster up

.PHONY: demo-down
demo-down: localcluster ## Stop everything make demo or make run-bundle started.
	$(LOCALBIN)/localcluster down

.PHONY: run-bundle
run-bundle: tools build localcluster node-packages ## Install bundle/ alone on a fresh local cluster, like operator-sdk run bundle.
	$(LOCALBIN)/localcluster run-bundle --bundle bundle

.PHONY: scorecard
scorecard: build localcluster ## Run the custom scorecard tests (scorecard/) against the cluster of make demo.
	$(LOCALBIN)/localcluster scorecard

# The real node of the local cluster runs Debian's containerd, runc and CNI plugins, and
# kube-proxy programs iptables: installed when missing (as root, like the node itself).
NODE_PACKAGES := containerd runc containernetworking-plugins iptables
.PHONY: node-packages
node-packages: ## Install the local cluster node's Debian packages (containerd, runc, CNI plugins, iptables) when one is missing.
	@missing=""; for c in containerd runc iptables /usr/lib/cni/bridge; do command -v $$c >/dev/null 2>&1 || missing="$$missing $$c"; done; \
	if [ -n "$$missing" ]; then \
		echo ">> installing $(NODE_PACKAGES) from Debian's packages (missing:$$missing)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(NODE_PACKAGES) >/dev/null; \
	fi

.PHONY: localcluster
localcluster:
	cd $(TEST_MODULE) && go build -o $(LOCALBIN)/localcluster ./cmd/localcluster

.PHONY: test-e2e
test-e2e: tools build localcluster node-packages ## Run the end-to-end suites with the real OLM: install from catalog/ (test/e2e) and the release train (test/upgrade).
	cd $(TEST_MODULE) && go test $(GO_TEST_FLAGS) -p 1 -timeout 40m -v ./e2e/... ./upgrade/...

##@ Faults

.PHONY: test-chaos
test-chaos: tools build localcluster node-packages ## Crash the manager, restart kube-apiserver, kill the leader, race writers; print the figures.
	@mkdir -p $(CURDIR)/.cache
	cd $(TEST_MODULE) && go test $(GO_TEST_FLAGS) -p 1 -timeout 60m -v ./chaos/... 2>&1 | tee $(CURDIR)/.cache/chaos.log
	@echo; grep '^CHAOS' $(CURDIR)/.cache/chaos.log

##@ Benchmarks

APPS ?= 1000
ROUNDS ?= 3
.PHONY: bench
bench: tools build localcluster node-packages ## Measure with APPS Apps (default 1000) on a local cluster against a same-run baseline, ROUNDS times (default 3); run the Go benchmarks.
	go test -run '^$$' -bench . -benchmem ./controllers/desired ./controllers/apply ./api/v1alpha1
	@mkdir -p $(CURDIR)/.cache
	cd $(TEST_MODULE) && go run ./bench --apps $(APPS) --rounds $(ROUNDS) --out $(CURDIR)/.cache/bench-$(APPS).json

##@ Deployment (without OLM; needs cert-manager for the webhook certificates)

.PHONY: install
install: manifests kustomize ## Install the CRD into the cluster in your kubeconfig.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: manifests kustomize ## Remove the CRD, and with it every App, from the cluster.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: deploy
deploy: manifests kustomize ## Deploy the operator to the cluster in your kubeconfig.
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(KUSTOMIZE) build config/default | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: kustomize ## Remove the operator deployed with make deploy.
	$(KUSTOMIZE) build config/default | $(KUBECTL) delete --ignore-not-found -f -

##@ OLM bundle and catalog

.PHONY: bundle
bundle: manifests kustomize ## Generate bundle/ and bundle.Dockerfile for VERSION (CHANNELS, DEFAULT_CHANNEL) from config/manifests.
	$(KUSTOMIZE) build config/manifests | go run ./hack/bundle $(BUNDLE_GEN_FLAGS)

.PHONY: catalog
catalog: opm ## Write catalog/ from the cut releases of catalog/releases.yaml, each built again from its commit and rendered from its bundle image; refuse one whose digests changed.
	go run ./hack/catalog --opm $(OPM) --catalog catalog

##@ Images (built without a container engine)

.PHONY: images
images: opm ## Build the images of VERSION (manager, bundle, catalog, scorecard, sample workload, opm) for linux/amd64 and linux/arm64 into an OCI layout (_output/images).
	go run ./hack/images build --version $(VERSION) --tag-base $(IMAGE_TAG_BASE) --out $(IMAGES_DIR) --opm $(OPM)

.PHONY: images-push
images-push: ## Push the images of make images to REGISTRY (such as REGISTRY=127.0.0.1:5000/mycompany), tagged v$(VERSION) and addressable by digest.
	@test -n "$(REGISTRY)" || { echo "REGISTRY is not set: make images-push REGISTRY=<host>[:<port>]/<path>, such as REGISTRY=127.0.0.1:5000/mycompany" >&2; exit 2; }
	go run ./hack/images push --layout $(IMAGES_DIR) --registry $(REGISTRY)

.PHONY: bundle-build
bundle-build: ## Build the bundle image with a container engine.
	$(CONTAINER_TOOL) build -f bundle.Dockerfile -t $(BUNDLE_IMG) .

.PHONY: bundle-push
bundle-push: ## Push the bundle image with a container engine.
	$(MAKE) docker-push IMG=$(BUNDLE_IMG)

.PHONY: catalog-build
catalog-build: ## Build the catalog image, which serves catalog/ with opm, with a container engine.
	$(CONTAINER_TOOL) build -f catalog.Dockerfile -t $(CATALOG_IMG) .

.PHONY: catalog-push
catalog-push: ## Push the catalog image with a container engine.
	$(MAKE) docker-push IMG=$(CATALOG_IMG)

.PHONY: scorecard-build
scorecard-build: ## Build the custom scorecard tests' image with a container engine.
	$(CONTAINER_TOOL) build -f scorecard/Dockerfile -t $(SCORECARD_IMG) .

.PHONY: scorecard-push
scorecard-push: ## Push the custom scorecard tests' image with a container engine.
	$(MAKE) docker-push IMG=$(SCORECARD_IMG)

##@ Tools

# tool(name, module under hack/tools, package)
define tool
$(LOCALBIN)/$(1): hack/tools/$(2)/go.mod hack/tools/$(2)/go.sum hack/tools/build.sh
	@hack/tools/build.sh $(2) $(3) $(1)
endef
$(eval $(call tool,controller-gen,gen,sigs.k8s.io/controller-tools/cmd/controller-gen))
$(eval $(call tool,kustomize,gen,sigs.k8s.io/kustomize/kustomize/v5))
$(eval $(call tool,kube-apiserver,kube,k8s.io/kubernetes/cmd/kube-apiserver))
$(eval $(call tool,kube-controller-manager,kube,k8s.io/kubernetes/cmd/kube-controller-manager))
$(eval $(call tool,kube-scheduler,kube,k8s.io/kubernetes/cmd/kube-scheduler))
$(eval $(call tool,kubectl,kube,k8s.io/kubernetes/cmd/kubectl))
$(eval $(call tool,etcd,kube,go.etcd.io/etcd/server/v3))
$(eval $(call tool,kubelet,kube,k8s.io/kubernetes/cmd/kubelet))
$(eval $(call tool,kube-proxy,kube,k8s.io/kubernetes/cmd/kube-proxy))
$(eval $(call tool,coredns,node,github.com/mycompany/app-operator/hack/tools/node/coredns))
$(eval $(call tool,cp,node,github.com/u-root/u-root/cmds/core/cp))
$(eval $(call tool,kwok,kwok,sigs.k8s.io/kwok/cmd/kwok))
$(eval $(call tool,kwokctl,kwok,sigs.k8s.io/kwok/cmd/kwokctl))
$(eval $(call tool,olm,olm,github.com/operator-framework/operator-lifecycle-manager/cmd/olm))
$(eval $(call tool,catalog,olm,github.com/operator-framework/operator-lifecycle-manager/cmd/catalog))
$(eval $(call tool,cpb,olm,github.com/operator-framework/operator-lifecycle-manager/util/cpb))
$(eval $(call tool,copy-content,olm,github.com/operator-framework/operator-lifecycle-manager/cmd/copy-content))
$(eval $(call tool,opm,olm,github.com/operator-framework/operator-registry/cmd/opm))
$(eval $(call tool,grpc_health_probe,olm,github.com/grpc-ecosystem/grpc-health-probe))
$(eval $(call tool,promtool,prom,github.com/prometheus/prometheus/cmd/promtool))
$(eval $(call tool,golangci-lint,lint,github.com/golangci/golangci-lint/v2/cmd/golangci-lint))

.PHONY: controller-gen kustomize opm golangci-lint
controller-gen: $(CONTROLLER_GEN) ## Build controller-gen into bin/.
kustomize: $(KUSTOMIZE) ## Build kustomize into bin/.
opm: $(OPM) ## Build opm into bin/.
golangci-lint: $(GOLANGCI_LINT) ## Build golangci-lint into bin/.

ENVTEST_TOOLS := $(addprefix $(LOCALBIN)/,kube-apiserver etcd kubectl)
NODE_TOOLS := $(addprefix $(LOCALBIN)/,kubelet kube-proxy coredns cp)
CLUSTER_TOOLS := $(ENVTEST_TOOLS) $(addprefix $(LOCALBIN)/,kube-controller-manager kube-scheduler kwok kwokctl) $(NODE_TOOLS)
OLM_TOOLS := $(addprefix $(LOCALBIN)/,olm catalog cpb copy-content opm grpc_health_probe)
ALL_TOOLS := $(CONTROLLER_GEN) $(KUSTOMIZE) $(CLUSTER_TOOLS) $(OLM_TOOLS) $(LOCALBIN)/promtool $(GOLANGCI_LINT) $(LOCALBIN)/pause

# The sandbox of every pod on the local cluster's node: the project's own, as nothing is pulled
# from public registries.
$(LOCALBIN)/pause: test/cmd/pause/main.go
	cd $(TEST_MODULE) && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o $@ ./cmd/pause

.PHONY: tools
tools: $(ALL_TOOLS) ## Build every pinned tool into bin/ (about 25 minutes cold, seconds after).

.PHONY: tools-envtest
tools-envtest: $(ENVTEST_TOOLS) ## Build the kube-apiserver, etcd and kubectl that envtest runs.
