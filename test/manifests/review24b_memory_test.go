package manifests

// Adversarial review of issue 24's sizing (commit 4691bb5): the sidecar's
// Deployment sets GOMEMLIMIT from its container's limits.memory. These
// tests check the value the kubelet renders against what the Go runtime
// reads, the headroom the runtime's limit leaves under the container's,
// and the limit and request against docs/deploying.md ("Sizing").

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
)

// review24bGoMemLimit is the value the kubelet gives GOMEMLIMIT in c, as
// kubernetes/pkg/api/v1/resource.ExtractContainerResourceValue renders a
// resourceFieldRef of limits.memory: the limit divided by the divisor (1
// when unset), rounded up, in decimal.
func review24bGoMemLimit(t *testing.T, c *v1.Container) string {
	t.Helper()
	i := slices.IndexFunc(c.Env, func(e v1.EnvVar) bool { return e.Name == "GOMEMLIMIT" })
	if i < 0 || c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.ResourceFieldRef == nil {
		t.Fatalf("env %+v: no GOMEMLIMIT from a resourceFieldRef", c.Env)
	}
	ref := c.Env[i].ValueFrom.ResourceFieldRef
	if ref.Resource != "limits.memory" || (ref.ContainerName != "" && ref.ContainerName != c.Name) {
		t.Fatalf("GOMEMLIMIT from %+v, want this container's limits.memory", ref)
	}
	limit, ok := c.Resources.Limits[v1.ResourceMemory]
	if !ok {
		t.Fatal("no memory limit: GOMEMLIMIT would be the node's allocatable memory")
	}
	divisor := int64(1)
	if !ref.Divisor.IsZero() {
		divisor = ref.Divisor.Value()
	}
	return strconv.FormatInt(int64(math.Ceil(float64(limit.Value())/float64(divisor))), 10)
}

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

// TestReview24bGoMemLimitIsTheLimitInBytes: the value rendered from the
// Deployment is a byte count the runtime accepts, and the runtime's limit
// is the container's limit exactly (a divisor such as 1Mi would render
// "320", which Go reads as 320 bytes and collects without end).
func TestReview24bGoMemLimitIsTheLimitInBytes(t *testing.T) {
	if os.Getenv(review24bReadMemLimitEnv) == "1" {
		fmt.Printf("memory limit %d", debug.SetMemoryLimit(-1))
		os.Exit(0)
	}
	forEachSidecar(t, func(t *testing.T, d *appsv1.Deployment) {
		c := sidecarContainer(t, d)
		limit := c.Resources.Limits[v1.ResourceMemory]
		value := review24bGoMemLimit(t, c)
		if got := review24bRuntimeLimit(t, value); got != limit.Value() {
			t.Errorf("GOMEMLIMIT=%s sets the runtime's limit to %d bytes, want the container's %d", value, got, limit.Value())
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
