#!/usr/bin/env bash
# Regenerates everything that is generated from the API types under
# pkg/apis/<group>/<version>/, in the module rooted at $1 (default: this
# repository; hack/verify-codegen.sh passes a temporary copy):
#
#   pkg/apis/*/*/zz_generated.deepcopy.go   deepcopy-gen
#   pkg/generated/clientset/versioned/      client-gen (typed clientset and its fake)
#   pkg/generated/listers/                  lister-gen
#   pkg/generated/informers/                informer-gen
#   deploy/crds/generated/                  controller-gen (CRD YAML)
#
# Every output is deleted first, so a removed type leaves nothing behind.
# The generators come from $CODEGEN_BIN (the Makefile builds them into
# .cache/bin from test/tools/codegen). Run `make generate`, not this script.
set -euo pipefail

root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${CODEGEN_BIN:?CODEGEN_BIN must name the directory of the generators (make generate sets it)}
module=github.com/xns-csi/csi-provisioner
# The header of every generated Go file; empty, as this project's files carry
# no license header (the generators add their "Code generated" line).
header=hack/boilerplate.go.txt

# The generators load the API packages with the go command, from vendor/
# as every build of this module does.
export GOFLAGS=${GOFLAGS:--mod=vendor} GOTOOLCHAIN=${GOTOOLCHAIN:-local}

cd "$root"
# The API packages: every pkg/apis/<group>/<version> with a doc.go.
mapfile -t apis < <(find pkg/apis -mindepth 3 -maxdepth 3 -name doc.go -printf '%h\n' | sort)
if [ ${#apis[@]} -eq 0 ]; then
	echo "no API packages under $root/pkg/apis" >&2
	exit 1
fi
pkgs=("${apis[@]/#/$module/}")

rm -rf pkg/generated deploy/crds/generated
find pkg/apis -name 'zz_generated.*.go' -delete

"$bin/deepcopy-gen" --go-header-file "$header" --output-file zz_generated.deepcopy.go "${pkgs[@]}"

"$bin/client-gen" --go-header-file "$header" \
	--clientset-name versioned \
	--input-base "" --input "$(IFS=,; echo "${pkgs[*]}")" \
	--output-dir pkg/generated/clientset --output-pkg "$module/pkg/generated/clientset"

"$bin/lister-gen" --go-header-file "$header" \
	--output-dir pkg/generated/listers --output-pkg "$module/pkg/generated/listers" \
	"${pkgs[@]}"

"$bin/informer-gen" --go-header-file "$header" --single-directory \
	--versioned-clientset-package "$module/pkg/generated/clientset/versioned" \
	--listers-package "$module/pkg/generated/listers" \
	--output-dir pkg/generated/informers --output-pkg "$module/pkg/generated/informers" \
	"${pkgs[@]}"

"$bin/controller-gen" crd paths=./pkg/apis/... output:crd:dir=deploy/crds/generated
