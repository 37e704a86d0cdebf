//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
	"github.com/xns-csi/csi-provisioner/test/cluster"
	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// targetLabels are the labels Prometheus adds to every scraped series (the
// PodMonitors' target labels), not the components.
var targetLabels = []string{"job", "namespace", "pod", "instance", "container", "endpoint", "deployment"}

// TestE2EMonitoring applies deploy/overlays/monitoring to the real
// kube-apiserver with the prometheus-operator's published CRDs, runs the
// four components through a workload that gives their state gauges
// something to show (a claim waiting for a grant, a CreateVolume parked
// past --timeout, a snapshot's deletion waiting for the restore from it, a
// denied snapshot, a transfer), scrapes their /metrics, and fails if a
// metric or label a rule or a dashboard panel uses is missing.
func TestE2EMonitoring(t *testing.T) {
	ctx := ctxFor(t)
	t.Run("OverlayApplies", func(t *testing.T) { testMonitoringOverlayApplies(t, ctx) })
	ensureGrantCRD(t)

	// The sidecar: a driver whose restores take 8 s, a sidecar whose
	// CreateVolume times out after 2 s (the call is parked and sent again),
	// under leader election (the standby's leader_election_master_status).
	stack, err := world.StartStack(ctx, "monitoring.csi.example.com", []string{"--restore-delay=8s"})
	if err != nil {
		t.Fatal(err)
	}
	sidecar, err := world.StartSidecar(ctx, stack, "monitoring", "--timeout=2s", "--leader-election", "--leader-election-namespace=default",
		"--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s", "--leader-election-retry-period=1s")
	if err != nil {
		t.Fatal(err)
	}
	// The validator and the transfer controller act on the whole cluster:
	// left running, they would act in the later tests of the suite too.
	validator, err := world.StartValidator(ctx, "monitoring-validator", "--feature-gates=CrossNamespaceSourceProvisioning=true", "--v=2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(validator.Kill)
	transfer, err := world.StartTransferController(ctx, "monitoring-transfer", "--retention=2s", "--v=2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(transfer.Kill)
	ns := namespace(t, "monitoring")
	// The webhook with its DELETE guard, whose held snapshots are a gauge.
	if _, err := world.Cluster.Kubectl(ctx, "apply", "-f", filepath.Join(world.Root, "deploy", "overlays", "webhook-guard", "rbac.yaml")); err != nil {
		t.Fatal(err)
	}
	ca, certs := webhookCerts(t)
	webhook, err := world.StartSnapshotWebhook(ctx, "monitoring-webhook", certs.CertFile(), certs.KeyFile(), "--v=2",
		"--guard-cross-namespace-restores", "--feature-gates=CrossNamespaceSourceProvisioning=true")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { webhook.Stop(5 * time.Second) })
	registerWebhook(t, ctx, ns, webhook, ca.PEM)
	addrs := map[string]string{"csi-provisioner": sidecar.HTTPAddr, "volume-data-source-validator": validator.HTTPAddr,
		"storage-transfer-controller": transfer.HTTPAddr, "snapshot-validation-webhook": webhook.HTTPAddr}
	exported := map[string]map[string]bool{}
	scrapeAll := func() {
		for component, addr := range addrs {
			scrapeInto(t, component, addr, exported)
		}
	}

	class := storageClass(t, "monitoring", stack.Name)
	prod, test := namespace(t, "prod"), namespace(t, "test")
	sourceWithSnapshot(t, stack, prod, class, "snap", "monitored data")
	createPVC(t, test, "restore", class, restoring(prod, "snap"))
	waitFor(t, "the claim to wait for its grant, and the validator to have warned it", func(context.Context) bool {
		waiting, err1 := scrapeSeries(sidecar.HTTPAddr, `csi_provisioner_waiting_claims{reason="ReferenceGrantMissing"}`)
		warned, err2 := scrapeSeries(validator.HTTPAddr, `volume_data_source_validator_warned_claims{reason="ReferenceGrantMissing"}`)
		return err1 == nil && err2 == nil && waiting == 1 && warned >= 1
	})
	scrapeAll()
	grant(t, prod, "allow", test, "snap")
	waitFor(t, "a parked CreateVolume", func(context.Context) bool {
		parked, err := scrapeSeries(sidecar.HTTPAddr, `csi_provisioner_inflight_create_volumes{state="parked"}`)
		return err == nil && parked >= 1
	})
	scrapeAll()
	// The driver gives up each restore with its caller, after 2 s: a
	// sidecar that waits longer takes over (the same Lease) and sends the
	// parked call again. While that call runs (the driver then refuses to
	// delete the backend snapshot), the snapshot's deletion is requested,
	// and waits for the restore.
	leArgs := []string{"--leader-election", "--leader-election-namespace=default",
		"--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s", "--leader-election-retry-period=1s"}
	sidecar.Kill()
	if sidecar, err = world.StartSidecar(ctx, stack, "monitoring-patient", append([]string{"--timeout=30s"}, leArgs...)...); err != nil {
		t.Fatal(err)
	}
	addrs["csi-provisioner"] = sidecar.HTTPAddr
	t.Cleanup(sidecar.Kill)
	waitFor(t, "the patient sidecar to send the CreateVolume", func(context.Context) bool {
		running, err := scrapeSeries(sidecar.HTTPAddr, `csi_provisioner_inflight_create_volumes{state="running"}`)
		return err == nil && running >= 1
	})
	deleteProtectedSnapshot(t, ctx, prod)
	waitFor(t, "the deletion to wait for the restore, and the guard to hold the snapshot", func(context.Context) bool {
		waiting, err1 := scrapeSeries(sidecar.HTTPAddr, `csi_provisioner_protected_sources_deletion_waiting{kind="VolumeSnapshot"}`)
		held, err2 := scrapeSeries(webhook.HTTPAddr, `snapshot_validation_webhook_guard_held_snapshots`)
		return err1 == nil && err2 == nil && waiting >= 1 && held >= 1
	})
	scrapeAll()
	waitBound(t, test, "restore")

	expectDenied(t, tryCreateContentJSON(ctx, contentJSON(ns, ns+"-unnamed", "monitoring.example.com", "", "", ""), false), "spec.volumeSnapshotRef.name")
	// A webhook kube-apiserver cannot reach, failing open, as the
	// deployed webhook (failurePolicy Ignore) does when it is down.
	unreachable := ns + "-unreachable"
	ignore := admissionregistrationv1.Ignore
	if err := world.RegisterValidatingHook(ctx, localenv.ValidatingHook{Config: "e2e-" + unreachable, Hook: "unreachable.snapshot.storage.k8s.io",
		URL: "https://127.0.0.1:1/volumesnapshot", CABundle: ca.PEM, FailurePolicy: &ignore, Labels: map[string]string{webhookLabel: unreachable},
		Rule: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{"snapshot.storage.k8s.io"}, APIVersions: []string{"v1"}, Resources: []string{"volumesnapshotcontents"}}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = world.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), "e2e-"+unreachable, metav1.DeleteOptions{})
	})
	// kube-apiserver takes up a new configuration asynchronously: create
	// (dry run) until it has called the hook, failed and let the create
	// through, as its own metric says.
	waitFor(t, "kube-apiserver to fail open on the unreachable webhook", func(ctx context.Context) bool {
		if err := tryCreateContentJSON(ctx, contentJSON(unreachable, unreachable+"-content", "monitoring.example.com", "snap", "uid-1", ""), true); err != nil {
			t.Fatalf("a create through a webhook that fails open: %v", err)
		}
		raw, err := world.Kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		return err == nil && bytes.Contains(raw, []byte(`apiserver_admission_webhook_fail_open_count{name="unreachable.snapshot.storage.k8s.io"`))
	})

	api := transferClient(t)
	createPVC(t, prod, "moved", class)
	waitBound(t, prod, "moved")
	token := offer(t, api, prod, "move", transferv1alpha1.KindPersistentVolumeClaim, "moved")
	waitFor(t, "the request to be counted Pending", func(context.Context) bool {
		pending, err := scrapeSeries(transfer.HTTPAddr, `storage_transfer_requests{kind="PersistentVolumeClaim",phase="Pending"}`)
		return err == nil && pending >= 1
	})
	scrapeAll()
	accept(t, api, test, prod, "move", token)
	waitTransferGone(t, api, prod, test, nil)
	scrapeAll()

	// The rules' kube-apiserver metrics (its calls to the webhook).
	raw, err := world.Kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	addFamilies(t, "kube-apiserver", raw, exported)

	used := usedByRulesAndDashboard(t)
	for _, name := range slices.Sorted(maps.Keys(used)) {
		if name == "up" { // Prometheus' own, per target
			continue
		}
		labels, ok := exported[name]
		if !ok {
			t.Errorf("%s is used by a rule or the dashboard but no component exports it", name)
			continue
		}
		for _, l := range used[name] {
			if !labels[l] && !slices.Contains(targetLabels, l) {
				t.Errorf("%s is used with the label %q, which it does not have (it has %v)", name, l, slices.Sorted(maps.Keys(labels)))
			}
		}
	}
}

// testMonitoringOverlayApplies: the prometheus-operator's CRDs are
// installed, the overlay applies (server-side, field validation strict),
// and the API server refuses a PodMonitor its schema does not allow, so
// the apply is checked for real.
func testMonitoringOverlayApplies(t *testing.T, ctx context.Context) {
	if err := world.InstallCRDs(ctx, "monitoring/monitoring.coreos.com_podmonitors.yaml",
		"monitoring/monitoring.coreos.com_servicemonitors.yaml", "monitoring/monitoring.coreos.com_prometheusrules.yaml"); err != nil {
		t.Fatal(err)
	}
	overlay := filepath.Join(world.Root, "deploy", "overlays", "monitoring")
	if out, err := world.Cluster.Kubectl(ctx, "apply", "--server-side", "--field-manager=e2e", "-k", overlay); err != nil {
		t.Fatalf("kubectl apply -k deploy/overlays/monitoring: %v\n%s", err, out)
	}
	for _, obj := range []string{"prometheusrule/xns-csi", "podmonitor/csi-provisioner", "podmonitor/volume-data-source-validator",
		"podmonitor/snapshot-validation-webhook", "podmonitor/storage-transfer-controller", "configmap/xns-csi-dashboard"} {
		if out, err := world.Cluster.Kubectl(ctx, "get", "-n", "default", obj); err != nil {
			t.Errorf("%s: %v\n%s", obj, err, out)
		}
	}
	bad := `{"apiVersion":"monitoring.coreos.com/v1","kind":"PodMonitor","metadata":{"name":"bad","namespace":"default"},` +
		`"spec":{"selector":{},"podMetricsEndpoints":[{"port":"http-endpoint","scheme":"gopher"}]}}`
	cmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig", world.Cluster.Kubeconfig(cluster.Admin), "apply", "--dry-run=server", "-f", "-")
	cmd.Stdin = strings.NewReader(bad)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "scheme") {
		t.Errorf("A PodMonitor with scheme gopher: %v, %s; want refused by the CRD's schema", err, out)
	}
	t.Cleanup(func() {
		_, _ = world.Cluster.Kubectl(context.Background(), "delete", "-k", overlay, "--ignore-not-found")
	})
}

// scrapeInto adds the metric families component serves at addr, with
// their label names, to exported. A histogram's series are its _bucket
// (with le), _count and _sum.
func scrapeInto(t *testing.T, component, addr string, exported map[string]map[string]bool) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics") //nolint:noctx // local test endpoint
	if err != nil {
		t.Fatalf("scraping %s: %v", component, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	addFamilies(t, component, body, exported)
}

// addFamilies adds the metric families of body, in the text exposition
// format, with their label names, to exported.
func addFamilies(t *testing.T, component string, body []byte, exported map[string]map[string]bool) {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parsing the metrics of %s: %v", component, err)
	}
	add := func(name string, m *dto.Metric, extra ...string) {
		if exported[name] == nil {
			exported[name] = map[string]bool{}
		}
		for _, l := range m.GetLabel() {
			exported[name][l.GetName()] = true
		}
		for _, l := range extra {
			exported[name][l] = true
		}
	}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			if f.GetType() == dto.MetricType_HISTOGRAM {
				add(name+"_bucket", m, "le")
				add(name+"_count", m)
				add(name+"_sum", m)
				continue
			}
			add(name, m)
		}
	}
}

// usedByRulesAndDashboard lists, with promql-selectors (Prometheus'
// parser), the metrics the PrometheusRule and the dashboard use and the
// labels each is selected or grouped by.
func usedByRulesAndDashboard(t *testing.T) map[string][]string {
	t.Helper()
	overlay := filepath.Join(world.Root, "deploy", "overlays", "monitoring")
	out, err := exec.CommandContext(t.Context(), filepath.Join(world.Root, ".cache", "bin", "promql-selectors"),
		filepath.Join(overlay, "prometheusrule.yaml"), filepath.Join(overlay, "dashboards", "xns-csi.json")).Output()
	if err != nil {
		t.Fatalf("promql-selectors: %v", err)
	}
	used := map[string][]string{}
	scanner := bufio.NewScanner(bytes.NewReader(out))
	for scanner.Scan() {
		name, labels, _ := strings.Cut(scanner.Text(), " ")
		used[name] = strings.FieldsFunc(labels, func(r rune) bool { return r == ',' })
	}
	if len(used) == 0 {
		t.Fatal("promql-selectors found no metric in the rules and the dashboard")
	}
	return used
}
