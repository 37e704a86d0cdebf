#!/usr/bin/env bash
# Usage: hack/build-tool.sh NAME DIR OUT [go build arguments...]
#
# Builds a tool of .cache/bin from its wrapper module DIR (test/tools/*):
# go build -v -trimpath -o OUT in DIR, with GOFLAGS=-mod=mod (the wrapper
# modules are not vendored). Its output is condensed to a line every 200
# packages (errors and downloads pass through), each line prefixed with
# [NAME], so that builds running side by side (make -j2) stay readable.
# With TIMINGS set, it appends "tool NAME SECONDS STATUS" to that file,
# which .ci/run prints at its end.
set -uo pipefail
name=$1 dir=$2 out=$3
shift 3
start=$SECONDS
echo "[$name] building"
(cd "$dir" && GOFLAGS="-mod=mod -buildvcs=false" ${GO:-go} build -v -trimpath -o "$out" "$@" 2>&1) |
	awk -v prefix="[$name] " '
		/^[a-z0-9.-]+(\/[^ :]+)*$/ { if (++n % 200 == 0) { print prefix "... " n " packages compiled"; fflush() } next }
		{ print prefix $0; fflush() }'
status=${PIPESTATUS[0]}
seconds=$((SECONDS - start))
result=ok
if [ "$status" -ne 0 ]; then result=FAILED; fi
echo "[$name] $result in ${seconds}s"
if [ -n "${TIMINGS:-}" ]; then echo "tool $name $seconds $result" >> "$TIMINGS"; fi
exit "$status"
