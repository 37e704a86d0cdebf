package manifests

// Adversarial review of issue 24's sizing (commit 4691bb5): the sidecar's
// Deployment sets GOMEMLIMIT under its container's limits.memory. These
// tests check the value against what the Go runtime reads, the headroom
// the runtime's limit leaves under the container's, and the limit and
// request against docs/deploying.md ("Sizing").

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
)

// review24bReadMemLimitEnv makes the test binary, started again by
// review24bRuntimeLimit, print the memory limit its runtime read from
// GOMEMLIMIT.
const review24bReadMemLimitEnv = "REVIEW24B_PRINT_MEMORY_LIMIT"

// review24bRuntimeLimit returns the memory limit the Go runtime sets from
// GOMEMLIMIT=value, read in a process of its own (the runtime reads the
// variable at start only).
func review24bRuntimeLimit(t *testing.T, value string) int64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestReview24bGoMemLimitIsTheLimitInBytes$")
	cmd.Env = append(os.Environ(), review24bReadMemLimitEnv+"=1", "GOMEMLIMIT="+value)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("GOMEMLIMIT=%s: the runtime refused it (%v): %s", value, err, out)
	}
	var n int64
	if _, err := fmt.Sscanf(string(out), "memory limit %d", &n); err != nil {
		t.Fatalf("GOMEMLIMIT=%s: reading %q: %v", value, out, err)
	}
	return n
}

// TestReview24bGoMemLimitIsTheLimitInBytes: the Deployment's GOMEMLIMIT
// is a value the runtime accepts, and reads as parseGoMemLimit does (a
// value without a unit is bytes: "320" would be 320 bytes, and the
// runtime would collect without end).
func TestReview24bGoMemLimitIsTheLimitInBytes(t *testing.T) {
	if os.Getenv(review24bReadMemLimitEnv) == "1" {
		fmt.Printf("memory limit %d", debug.SetMemoryLimit(-1))
		os.Exit(0)
	}
	forEachSidecar(t, func(t *testing.T, d *appsv1.Deployment) {
		value := goMemLimit(t, sidecarContainer(t, d))
		want, err := parseGoMemLimit(value)
		if err != nil {
			t.Fatal(err)
		}
		if got := review24bRuntimeLimit(t, value); got != want {
			t.Errorf("GOMEMLIMIT=%s sets the runtime's limit to %d bytes, want %d", value, got, want)
		}
	})
}

// TestReview24bMemoryAsSizingSays: the Deployment's request and limit are
// the ones docs/deploying.md's "Sizing" names, and the limit is at least
// what its rule asks for the 50,000 PVCs, snapshots and grants of each
// kind the Deployment's comment says it holds (TestSidecarMemory accepts
// any limit from 256Mi, under the rule's 264 MiB).
func TestReview24bMemoryAsSizingSays(t *testing.T) {
	doc, err := os.ReadFile("../../docs/deploying.md")
	if err != nil {
		t.Fatal(err)
	}
	sizes := regexp.MustCompile(`requests (\d+) MiB and limits the\s+container to (\d+) MiB`).FindSubmatch(doc)
	rule := regexp.MustCompile(`set the limit to (\d+) MiB plus\s+(\d+) MiB per 10,000 of each`).FindSubmatch(doc)
	if sizes == nil || rule == nil {
		t.Fatalf("docs/deploying.md no longer says the request and limit (%q) or the sizing rule (%q)", sizes, rule)
	}
	mib := func(b []byte) int64 { n, _ := strconv.ParseInt(string(b), 10, 64); return n << 20 }
	forEachSidecar(t, func(t *testing.T, d *appsv1.Deployment) {
		r := sidecarContainer(t, d).Resources
		request, limit := r.Requests[v1.ResourceMemory], r.Limits[v1.ResourceMemory]
		if request.Value() != mib(sizes[1]) || limit.Value() != mib(sizes[2]) {
			t.Errorf("the Deployment requests %s and limits to %s; Sizing says %s MiB and %s MiB", request.String(), limit.String(), sizes[1], sizes[2])
		}
		if want := mib(rule[1]) + 5*mib(rule[2]); limit.Value() < want {
			t.Errorf("limit %s under Sizing's rule for 50,000 of each, %d MiB", limit.String(), want>>20)
		}
	})
}
