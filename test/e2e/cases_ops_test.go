//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"github.com/xns-csi/csi-provisioner/test/localenv"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testMetrics: the KEP's cross_namespace_* counters count by storage class.
func testMetrics(t *testing.T) {
	ensureGrantCRD(t)
	sc := world.Local.Sidecars[0]
	cross, local := storageClass(t, "metrics-cross", localenv.LocalDriver), storageClass(t, "metrics-local", localenv.LocalDriver)
	prod, test := namespace(t, "prod"), namespace(t, "test")
	sourceWithSnapshot(t, world.Local, prod, cross, "snap", "m")

	createPVC(t, test, "refused-first", cross, restoring(prod, "snap"))
	waitEvent(t, test, "refused-first", "ProvisioningFailed", "no ReferenceGrant")
	grant(t, prod, "allow", test, "snap")
	waitBound(t, test, "refused-first")
	createPVC(t, prod, "same-ns", local, restoring("", "snap"))
	waitBound(t, prod, "same-ns")

	if got := metric(t, sc, "cross_namespace_persistentvolumeclaim_provision_total", cross); got != 1 {
		t.Errorf("cross_namespace_persistentvolumeclaim_provision_total{%s} = %v, want 1", cross, got)
	}
	if got := metric(t, sc, "cross_namespace_persistentvolumeclaim_provision_failed_total", cross); got < 1 {
		t.Errorf("cross_namespace_persistentvolumeclaim_provision_failed_total{%s} = %v, want the refusal counted", cross, got)
	}
	for _, name := range []string{"cross_namespace_persistentvolumeclaim_provision_total", "cross_namespace_persistentvolumeclaim_provision_failed_total"} {
		if got := metric(t, sc, name, local); got != 0 {
			t.Errorf("%s{%s} = %v, want 0: that class only restored within a namespace", name, local, got)
		}
	}
	// The other families the sidecar promises on the same endpoint.
	body := scrape(t, sc)
	for _, family := range []string{"persistentvolumeclaim_provision_by_source_total", "csi_sidecar_operations_seconds",
		"workqueue_adds_total", "rest_client_requests_total", "controller_persistentvolumeclaim_provision_total"} {
		if !strings.Contains(body, "\n"+family) {
			t.Errorf("/metrics has no %s", family)
		}
	}
}

// scrape returns a sidecar's /metrics page.
func scrape(t *testing.T, sc *localenv.Sidecar) string {
	t.Helper()
	resp, err := http.Get("http://" + sc.HTTPAddr + "/metrics") //nolint:noctx // local test endpoint
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testLeaderElection: two replicas, one provisions; the leader is killed
// mid-run, the other takes over, every claim binds once and the driver sees
// no duplicate volume.
func testLeaderElection(t *testing.T) {
	ctx := ctxFor(t)
	ha, err := world.StartStack(ctx, "ha.csi.example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	leArgs := []string{"--leader-election", "--leader-election-namespace=default",
		"--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s", "--leader-election-retry-period=1s"}
	a, err := world.StartSidecar(ctx, ha, "a", leArgs...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := world.StartSidecar(ctx, ha, "b", leArgs...)
	if err != nil {
		t.Fatal(err)
	}
	class := storageClass(t, "ha", ha.Name)
	ns := namespace(t, "ha")
	const claims = 20
	for i := range claims {
		createPVC(t, ns, fmt.Sprintf("claim-%02d", i), class)
	}
	waitFor(t, "some claims to bind", func(ctx context.Context) bool { return bound(ctx, ns) >= 3 })

	leader, standby := a, b
	if provisioned(t, b) > 0 {
		leader, standby = b, a
	}
	if provisioned(t, leader) == 0 || provisioned(t, standby) != 0 {
		t.Fatalf("want exactly one provisioning replica: a=%v b=%v", provisioned(t, a), provisioned(t, b))
	}
	leader.Kill()
	t.Logf("killed the leader %s with %d of %d claims bound", leader.Name, bound(ctx, ns), claims)

	for i := range claims {
		waitBound(t, ns, fmt.Sprintf("claim-%02d", i))
	}
	if provisioned(t, standby) == 0 {
		t.Error("the standby never provisioned after the leader died")
	}
	volumes, err := filepath.Glob(filepath.Join(ha.State, "volumes", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(volumes) != claims {
		t.Errorf("the driver holds %d volumes for %d claims: duplicates or leaks", len(volumes), claims)
	}
}

func bound(ctx context.Context, ns string) int {
	list, err := world.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0
	}
	n := 0
	for _, c := range list.Items {
		if c.Spec.VolumeName != "" {
			n++
		}
	}
	return n
}

// provisioned sums controller_persistentvolumeclaim_provision_total of a
// sidecar (0 if it cannot be scraped, e.g. because it was killed).
func provisioned(t *testing.T, sc *localenv.Sidecar) float64 {
	t.Helper()
	if exited, _ := sc.Exited(); exited {
		return 0
	}
	resp, err := http.Get("http://" + sc.HTTPAddr + "/metrics") //nolint:noctx // local test endpoint
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	total := 0.0
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if strings.HasPrefix(line, "controller_persistentvolumeclaim_provision_total{") {
			if v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64); err == nil {
				total += v
			}
		}
	}
	return total
}
