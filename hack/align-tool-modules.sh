#!/usr/bin/env bash
# Usage: hack/align-tool-modules.sh
#
# Brings test/tools/kube (the local control plane) and
# test/tools/snapshotter to the same version of every module whose packages
# both build: the higher of the two, as Go's version selection would pick
# it, and the snapshotter's replace directives to the control plane's. Go's
# build cache reuses a compiled package only when its module and those of
# all its dependencies are required at the same versions (a replace
# directive does not count), so the snapshotter then builds in seconds
# after the control plane instead of minutes (issue 27). Run it after
# changing either go.mod; make test-e2e checks that both still work.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=-mod=mod
kube=test/tools/kube snap=test/tools/snapshotter

# modules lists "path version" of the modules whose packages a wrapper
# module builds (its tools.go imports the commands; -e, as they are
# programs, not importable packages).
modules() {
	local list
	list=$(cd "$1" && go list -e -tags tools -deps -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}' ./... | sort -u)
	if [ -z "$list" ]; then
		echo "no modules listed in $1" >&2
		exit 1
	fi
	echo "$list"
}

# The snapshotter repeats its upstream's pins of the k8s.io staging modules
# as replace directives: those both replace follow the control plane's.
(cd "$kube" && go list -m -f '{{with .Replace}}{{$.Path}} {{.Path}} {{.Version}}{{end}}' all) |
	while read -r path to version; do
		if grep -q "^replace $path => " "$snap/go.mod"; then
			(cd "$snap" && go mod edit -replace="$path=$to@$version")
		fi
	done

for round in 1 2 3 4 5; do
	a=$(modules "$kube")
	b=$(modules "$snap")
	diffs=$(join <(echo "$a") <(echo "$b") | awk '$2 != $3')
	if [ -z "$diffs" ]; then
		# Listing modules adds go.sum lines that building does not need.
		(cd "$kube" && go mod tidy)
		(cd "$snap" && go mod tidy)
		echo "$kube and $snap build their shared packages from the same module versions"
		exit 0
	fi
	echo "round $round: $(wc -l <<<"$diffs") modules differ"
	while read -r path a b; do
		(cd "$kube" && go mod edit -require="$path@$b")
		(cd "$snap" && go mod edit -require="$path@$a")
	done <<<"$diffs"
	(cd "$kube" && go mod tidy)
	(cd "$snap" && go mod tidy)
done
echo "still differing after $round rounds:" >&2
echo "$diffs" >&2
exit 1
