package manifests

// REVIEW24B FINDING B (issue 24's sizing, commit 4691bb5): what the Go
// runtime's memory limit leaves under the container's. Helpers in
// review24b_memory_test.go.

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// review24bBinaryCode is the sidecar's resident code, which the runtime's
// limit does not count (runtime/debug.SetMemoryLimit: "it does not account
// for space used by the Go binary"): docs/deploying.md, "Resources and
// probes", gives 30 MiB of the 59 MiB peak.
var review24bBinaryCode = resource.MustParse("30Mi")

// TestReview24bGoMemLimitLeavesRoomForWhatTheRuntimeDoesNotCount: the
// runtime holds Sys-HeapReleased under GOMEMLIMIT; the cgroup also charges
// the mapped binary (30 MiB resident) and kernel memory held for the
// process. A GOMEMLIMIT equal to limits.memory lets the runtime grow to
// the container's limit before it collects harder, by which time the
// container is over it.
func TestReview24bGoMemLimitLeavesRoomForWhatTheRuntimeDoesNotCount(t *testing.T) {
	forEachSidecar(t, func(t *testing.T, d *appsv1.Deployment) {
		c := sidecarContainer(t, d)
		limit := c.Resources.Limits[v1.ResourceMemory]
		goLimit := review24bRuntimeLimit(t, goMemLimit(t, c))
		// REVIEW24B FINDING B: GOMEMLIMIT came from limits.memory through
		// a resourceFieldRef, which can only scale it by a unit, never
		// leave room under it; it is now a value 32 MiB under the limit. The runtime may use the whole 320Mi before
		// its limit makes it collect harder; with the binary's code and
		// the kernel's memory for the process on top, the container meets
		// its cgroup limit first: the kernel reclaims the pages of the
		// binary's own code (which then fault back in) and OOM-kills once
		// that is not enough, what the Deployment's comment says
		// GOMEMLIMIT prevents ("near the limit it collects more often
		// instead of being killed"). The Go GC guide advises 5-10% of
		// headroom; this asks for at least the code's 30 MiB.
		if room := limit.Value() - goLimit; room < review24bBinaryCode.Value() {
			t.Errorf("GOMEMLIMIT is %d bytes, %d under limits.memory %s; want at least %s of room for the binary's code and what else "+
				"the runtime does not count", goLimit, room, limit.String(), review24bBinaryCode.String())
		}
	})
}
