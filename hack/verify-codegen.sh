#!/usr/bin/env bash
# Fails when a generated file (see hack/update-codegen.sh) is stale, missing,
# extra or edited by hand. It regenerates into a temporary copy of the
# module (go.mod, go.sum, the API types and the generated outputs as they
# are now; vendor/ linked, not copied) and compares that with this tree, so
# it never changes the tree, needs no git, and judges uncommitted changes
# too. Run `make verify` (or `make verify-generated`), not this script.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# Every path hack/update-codegen.sh writes, and all it reads.
generated=(pkg/apis pkg/generated deploy/crds/generated)
inputs=(go.mod go.sum hack/boilerplate.go.txt)

cd "$repo"
# The generated clients are written for the client-go they are built with:
# test/tools/codegen pins k8s.io/code-generator at go.mod's k8s.io/client-go.
client_go=$(awk '$1 == "k8s.io/client-go" { print $2 }' go.mod)
code_generator=$(awk '$1 == "k8s.io/code-generator" { print $2 }' test/tools/codegen/go.mod)
if [ "$client_go" != "$code_generator" ]; then
	echo "test/tools/codegen pins k8s.io/code-generator $code_generator, but go.mod has k8s.io/client-go $client_go:" >&2
	echo "run 'cd test/tools/codegen && GOFLAGS=-mod=mod go get k8s.io/code-generator@$client_go && GOFLAGS=-mod=mod go mod tidy', then 'make generate'." >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for p in "${inputs[@]}" "${generated[@]}"; do
	if [ -e "$p" ]; then
		mkdir -p "$tmp/$(dirname "$p")"
		cp -R "$p" "$tmp/$p"
	fi
done
ln -s "$repo/vendor" "$tmp/vendor"

if ! "$repo/hack/update-codegen.sh" "$tmp" >"$tmp/codegen.log" 2>&1; then
	cat "$tmp/codegen.log" >&2
	exit 1
fi

stale=0
for p in "${generated[@]}"; do
	if ! diff -ruN "$p" "$tmp/$p"; then
		stale=1
	fi
done
if [ "$stale" -ne 0 ]; then
	echo "The generated files above are stale (- is the tree, + is what the types under pkg/apis generate): run 'make generate' and commit the result." >&2
	exit 1
fi
echo "generated files are up to date"
