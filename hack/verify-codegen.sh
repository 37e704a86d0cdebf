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

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$repo"
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
