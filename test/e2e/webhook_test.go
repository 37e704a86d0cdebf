//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/internal/snapshotwebhook/snapshotvalidation"
	"github.com/xns-csi/csi-provisioner/test/localenv"
	"github.com/xns-csi/csi-provisioner/test/servingcerts"
)

// webhookLabel marks the objects of TestE2ESnapshotWebhook: its webhook
// configuration selects only them, so the other cases of the suite never
// go through it.
const webhookLabel = "e2e.xns-csi.io/snapshot-webhook"

// TestE2ESnapshotWebhook runs the snapshot-validation-webhook binary as the
// ServiceAccount of deploy/webhook, serving a certificate of a CA made
// here, and registers it with the shared kube-apiserver over TLS
// (failurePolicy Fail, so a failed call would be a failed request). The
// installed snapshot CRDs carry external-snapshotter v8's CEL rules, which
// kube-apiserver checks before it calls webhooks; what reaches the webhook
// here is what CEL cannot state: a reference to the snapshot with empty
// names, a bound reference changed, a second default class per driver. The
// rows CEL covers are the unit tests' (internal/snapshotwebhook/snapshotvalidation).
func TestE2ESnapshotWebhook(t *testing.T) {
	ctx := ctxFor(t)
	ns := namespace(t, "webhook")
	driver := ns + ".webhook.example.com" // no csi-snapshotter serves it
	ca, certs := webhookCerts(t)
	// Persisted before the webhook exists: invalid under its rules (the
	// snapshot's name is empty), valid under CEL's (has(self.name)).
	invalid := ns + "-persisted-invalid"
	createContentJSON(t, ctx, contentJSON(ns, invalid, driver, "", "", `"finalizers":["example.com/hold"]`))
	// Two defaults of one driver that got past the default-class rule, as
	// two replicas' caches or two creates back to back let them.
	raced := []*snapv1.VolumeSnapshotClass{defaultClass(ns, ns+"-raced-a", "raced-"+driver), defaultClass(ns, ns+"-raced-b", "raced-"+driver)}
	for _, class := range raced {
		createClass(t, ctx, class)
	}

	wh, err := world.StartSnapshotWebhook(ctx, "snapshot-webhook-"+ns, certs.CertFile(), certs.KeyFile(), "--v=4")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wh.Stop(5 * time.Second) })
	registerWebhook(t, ctx, ns, wh, ca.PEM)

	t.Run("InvalidCreateDenied", func(t *testing.T) {
		err := tryCreateContentJSON(ctx, contentJSON(ns, ns+"-unnamed", driver, "", "", ""), false)
		expectDenied(t, err, "spec.volumeSnapshotRef.name: Required value")
	})
	t.Run("BoundReferenceImmutable", func(t *testing.T) {
		name := ns + "-bound"
		createContentJSON(t, ctx, contentJSON(ns, name, driver, "snap", "uid-1", ""))
		err := patchContent(ctx, name, `{"spec":{"volumeSnapshotRef":{"name":"other"}}}`)
		expectDenied(t, err, "spec.volumeSnapshotRef: Invalid value", "field is immutable once bound (uid uid-1 of "+ns+"/snap)")
		err = patchContent(ctx, name, `{"spec":{"volumeSnapshotRef":{"name":""}}}`)
		expectDenied(t, err, "spec.volumeSnapshotRef") // old valid, new invalid: strict
	})
	t.Run("RatchetingLetsAPersistedInvalidObjectGo", func(t *testing.T) {
		if err := patchContent(ctx, invalid, `{"metadata":{"labels":{"changed":"yes"}}}`); err != nil {
			t.Errorf("label change of an invalid content: %v", err)
		}
		if err := patchContent(ctx, invalid, `{"metadata":{"finalizers":null}}`); err != nil {
			t.Errorf("finalizer removal from an invalid content: %v", err)
		}
		if err := world.Snaps.SnapshotV1().VolumeSnapshotContents().Delete(ctx, invalid, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting an invalid content: %v", err)
		}
	})
	t.Run("SecondDefaultClassDenied", func(t *testing.T) {
		first, second := defaultClass(ns, ns+"-gold", driver), defaultClass(ns, ns+"-silver", driver)
		createClass(t, ctx, first)
		// The webhook's class cache sees the first class a moment later:
		// ask with dry runs until it does.
		waitFor(t, "the webhook to see the first default class", func(ctx context.Context) bool {
			_, err := world.Snaps.SnapshotV1().VolumeSnapshotClasses().Create(ctx, second, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err != nil
		})
		_, err := world.Snaps.SnapshotV1().VolumeSnapshotClasses().Create(ctx, second, metav1.CreateOptions{})
		expectDenied(t, err, "driver "+driver+" already has a default VolumeSnapshotClass: "+first.Name)
		createClass(t, ctx, defaultClass(ns, ns+"-other-driver", "other-"+driver))
	})
	t.Run("DefaultClassConflictReported", func(t *testing.T) {
		for _, class := range raced {
			waitFor(t, "a MultipleDefaultClasses event on "+class.Name, func(ctx context.Context) bool {
				events, err := world.Kube.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
					FieldSelector: "involvedObject.name=" + class.Name + ",reason=MultipleDefaultClasses"})
				return err == nil && len(events.Items) > 0 && strings.Contains(events.Items[0].Message, raced[0].Name+", "+raced[1].Name)
			})
		}
		if n := scrapeValue(t, wh.HTTPAddr, `snapshot_validation_webhook_default_class_conflicts{kind="VolumeSnapshotClass"}`); n < 1 {
			t.Errorf("%v conflicting drivers counted, want at least 1", n)
		}
	})
	t.Run("ValidSnapshotAllowed", func(t *testing.T) {
		before := webhookAdmissions(t, wh, "volumesnapshots", "allowed")
		claim := "data"
		snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: ns, Labels: map[string]string{webhookLabel: ns}},
			Spec: snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: &claim}}}
		if _, err := world.Snaps.SnapshotV1().VolumeSnapshots(ns).Create(ctx, snap, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if after := webhookAdmissions(t, wh, "volumesnapshots", "allowed"); after <= before {
			t.Errorf("the webhook counted %v allowed VolumeSnapshot creations, %v before: kube-apiserver did not call it", after, before)
		}
	})
	t.Run("CertificateRotatedWithoutFailedAdmission", func(t *testing.T) {
		rotateUnderLoad(t, ctx, ns, driver, wh, ca, certs)
	})
}

// rotateUnderLoad keeps kube-apiserver calling the webhook (dry-run
// creations, each an admission) while the certificate is swapped on disk
// as the kubelet swaps a Secret volume, until new connections get the new
// certificate; no admission may fail meanwhile.
func rotateUnderLoad(t *testing.T, ctx context.Context, ns, driver string, wh *localenv.SnapshotWebhook, ca *servingcerts.CA, certs *servingcerts.SecretVolume) {
	admitUnderLoad(t, ctx, ns, driver, wh, func() bool {
		if serial := servedSerial(t, wh, ca); serial != 1 {
			t.Errorf("served certificate %d before the rotation, want 1", serial)
		}
		if err := certs.WriteIssued(ca, 2); err != nil {
			t.Error(err)
			return false
		}
		return eventuallyTrue(30*time.Second, func() bool { return servedSerial(t, wh, ca) == 2 })
	})
}

// servedSerial is the serial of the certificate a new TLS connection to
// the webhook gets.
func servedSerial(t *testing.T, wh *localenv.SnapshotWebhook, ca *servingcerts.CA) int64 {
	t.Helper()
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12}}
	conn, err := dialer.DialContext(context.Background(), "tcp", strings.TrimPrefix(wh.URL, "https://"))
	if err != nil {
		t.Errorf("dialing the webhook: %v", err)
		return 0
	}
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

// registerWebhook registers wh for this test's objects and waits until
// kube-apiserver calls it; the registration is removed after the test.
// webhookCerts makes a CA and a serving certificate it issued (serial 1)
// in a Secret volume's layout.
func webhookCerts(t *testing.T) (*servingcerts.CA, *servingcerts.SecretVolume) {
	t.Helper()
	ca, err := servingcerts.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	certs := &servingcerts.SecretVolume{Dir: t.TempDir()}
	if err := certs.WriteIssued(ca, 1); err != nil {
		t.Fatal(err)
	}
	return ca, certs
}

func registerWebhook(t *testing.T, ctx context.Context, ns string, wh *localenv.SnapshotWebhook, caPEM []byte) {
	t.Helper()
	registerHook(t, ctx, ns, "validation-webhook.snapshot.storage.k8s.io", ns, wh, caPEM, admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{"snapshot.storage.k8s.io"}, APIVersions: []string{"v1"},
			Resources: []string{"volumesnapshots", "volumesnapshotcontents", "volumesnapshotclasses"}},
	})
	probe := contentJSON(ns, ns+"-probe", "probe.example.com", "", "", "")
	waitFor(t, "kube-apiserver to call the webhook", func(ctx context.Context) bool { return tryCreateContentJSON(ctx, probe, true) != nil })
}

// registerHook registers wh's /volumesnapshot path, trusted through
// caPEM, as the webhook hook of the configuration e2e-<suffix>, for rule
// and objects labeled webhookLabel=ns only, with failurePolicy Fail (a
// failed call is a failed request); the test deletes it.
func registerHook(t *testing.T, ctx context.Context, suffix, hook, ns string, wh *localenv.SnapshotWebhook, caPEM []byte, rule admissionregistrationv1.RuleWithOperations) {
	t.Helper()
	name := "e2e-" + suffix
	if err := world.RegisterValidatingHook(ctx, localenv.ValidatingHook{Config: name, Hook: hook, URL: wh.URL + "/volumesnapshot",
		CABundle: caPEM, Rule: rule, Labels: map[string]string{webhookLabel: ns}}); err != nil {
		t.Fatal(err)
	}
	hooks := world.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	t.Cleanup(func() { _ = hooks.Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// contentJSON is a pre-provisioned VolumeSnapshotContent of this test as
// JSON, with explicit (possibly empty) names that typed clients would
// omit; extraMetadata is added to its metadata.
func contentJSON(ns, name, driver, snapshot string, uid types.UID, extraMetadata string) []byte {
	metadata := fmt.Sprintf(`"name":%q,"labels":{%q:%q}`, name, webhookLabel, ns)
	if extraMetadata != "" {
		metadata += "," + extraMetadata
	}
	ref, err := json.Marshal(map[string]string{"name": snapshot, "namespace": ns, "uid": string(uid)})
	if err != nil {
		panic(err)
	}
	return []byte(fmt.Sprintf(`{"apiVersion":"snapshot.storage.k8s.io/v1","kind":"VolumeSnapshotContent","metadata":{%s},`+
		`"spec":{"driver":%q,"deletionPolicy":"Retain","source":{"snapshotHandle":"handle-%s"},"volumeSnapshotRef":%s}}`,
		metadata, driver, name, ref))
}

func tryCreateContentJSON(ctx context.Context, body []byte, dryRun bool) error {
	req := world.Snaps.SnapshotV1().RESTClient().Post().Resource("volumesnapshotcontents").Body(body)
	if dryRun {
		req = req.Param("dryRun", metav1.DryRunAll)
	}
	return req.Do(ctx).Error()
}

func createContentJSON(t *testing.T, ctx context.Context, body []byte) {
	t.Helper()
	if err := tryCreateContentJSON(ctx, body, false); err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(body, &meta); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		contents := world.Snaps.SnapshotV1().VolumeSnapshotContents()
		_, _ = contents.Patch(context.Background(), meta.Metadata.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		_ = contents.Delete(context.Background(), meta.Metadata.Name, metav1.DeleteOptions{})
	})
}

func patchContent(ctx context.Context, name, patch string) error {
	_, err := world.Snaps.SnapshotV1().VolumeSnapshotContents().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

func defaultClass(ns, name, driver string) *snapv1.VolumeSnapshotClass {
	return &snapv1.VolumeSnapshotClass{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{webhookLabel: ns},
		Annotations: map[string]string{snapshotvalidation.DefaultSnapshotClassAnnotation: "true"}},
		Driver: driver, DeletionPolicy: snapv1.VolumeSnapshotContentRetain}
}

func createClass(t *testing.T, ctx context.Context, class *snapv1.VolumeSnapshotClass) {
	t.Helper()
	if _, err := world.Snaps.SnapshotV1().VolumeSnapshotClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = world.Snaps.SnapshotV1().VolumeSnapshotClasses().Delete(context.Background(), class.Name, metav1.DeleteOptions{})
	})
}

// expectDenied fails t unless err is the webhook's denial with every part
// in its message.
func expectDenied(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("allowed, want denied with %q", parts)
		return
	}
	parts = append(parts, `admission webhook "validation-webhook.snapshot.storage.k8s.io" denied the request`)
	for _, part := range parts {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}
}

// webhookAdmissions is the webhook's count of CREATE admissions of resource
// with result (and no reason).
func webhookAdmissions(t *testing.T, wh *localenv.SnapshotWebhook, resource, result string) float64 {
	t.Helper()
	return scrapeValue(t, wh.HTTPAddr, admissionsSeries(resource, result))
}

// admissionsSeries is the series of webhookAdmissions.
func admissionsSeries(resource, result string) string {
	return fmt.Sprintf(`snapshot_validation_webhook_admission_requests_total{operation="CREATE",reason="",resource=%q,result=%q}`, resource, result)
}

// eventuallyTrue polls cond every 100 ms until it holds or timeout passes,
// for a caller that must clean up before it fails (waitFor fails at once).
func eventuallyTrue(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}
