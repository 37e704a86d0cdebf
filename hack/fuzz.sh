#!/usr/bin/env bash
# Runs every Go native fuzz target under internal/ and pkg/ for FUZZTIME each (one target
# at a time: go test -fuzz takes one target and one package), after the unit
# tests have run their seed corpora. Targets are listed with go test -list in
# the packages whose tests declare one, so a new FuzzXxx is picked up
# without editing this file.
set -euo pipefail

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
DIR=${FUZZ_DIR:-internal pkg}

count=0
for pkg in $(grep -rl --include='*_test.go' '^func Fuzz' $DIR | xargs -n1 dirname | sort -u | sed 's#^#./#'); do
	for target in $($GO test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		echo ">> fuzzing $pkg $target for $FUZZTIME"
		$GO test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg"
		count=$((count + 1))
	done
done
echo ">> $count fuzz targets, $FUZZTIME each"
