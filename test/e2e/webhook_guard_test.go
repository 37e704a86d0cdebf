//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// TestE2ESnapshotWebhookDeleteGuard runs the webhook with
// --guard-cross-namespace-restores as the ServiceAccount of deploy/webhook
// with the guard's RBAC (deploy/overlays/webhook-guard/rbac.yaml), and
// registers it for DELETE of volumesnapshots as that overlay does. A claim
// in namespace test restores prod's snapshot with a grant while the local
// driver holds the restore in CreateVolume (--restore-delay): `kubectl
// delete volumesnapshot` is denied naming the claim; once the claim is
// bound, it is allowed and the snapshot goes.
func TestE2ESnapshotWebhookDeleteGuard(t *testing.T) {
	ctx := ctxFor(t)
	slow, err := world.StartStack(ctx, "guard.csi.example.com", []string{"--restore-delay=20s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := world.StartSidecar(ctx, slow, "guard", "--timeout=60s"); err != nil {
		t.Fatal(err)
	}
	class := storageClass(t, "guard", slow.Name)
	prod, test := namespace(t, "prod"), namespace(t, "test")
	sourceWithSnapshot(t, slow, prod, class, "snap", "guarded data")
	grant(t, prod, "allow", test, "snap")

	wh := startGuardWebhook(t, ctx)
	registerDeleteGuard(t, ctx, prod, wh)
	if _, err := world.Cluster.Kubectl(ctx, "label", "-n", prod, "volumesnapshot", "snap", webhookLabel+"="+prod); err != nil {
		t.Fatal(err)
	}

	createPVC(t, test, "restore", class, restoring(prod, "snap"))
	waitFor(t, "the provisioner's finalizer on the snapshot", func(ctx context.Context) bool {
		s, err := world.Snaps.SnapshotV1().VolumeSnapshots(prod).Get(ctx, "snap", metav1.GetOptions{})
		return err == nil && slices.Contains(s.Finalizers, protectionFinalizer)
	})
	// The webhook's caches see the claim a moment after the API server:
	// a server-side dry run asks it without deleting anything.
	waitFor(t, "the webhook to deny the snapshot's deletion", func(ctx context.Context) bool {
		_, err := deleteSnapshot(ctx, prod, "--dry-run=server")
		return err != nil
	})
	out, err := deleteSnapshot(ctx, prod)
	if err == nil || !strings.Contains(out, test+"/restore") || !strings.Contains(out, `admission webhook "delete-guard.snapshot.storage.k8s.io" denied the request`) {
		t.Fatalf("kubectl delete volumesnapshot during the restore: %v\n%s\nwant denied naming %s/restore", err, out, test)
	}
	t.Logf("denied: %s", strings.TrimSpace(out))
	if s, err := world.Snaps.SnapshotV1().VolumeSnapshots(prod).Get(ctx, "snap", metav1.GetOptions{}); err != nil || s.DeletionTimestamp != nil {
		t.Fatalf("the snapshot should still be there, not being deleted: %v (err %v)", s, err)
	}

	if got := readData(t, slow, waitBound(t, test, "restore")); got != "guarded data" {
		t.Errorf("restored data = %q", got)
	}
	waitFor(t, "the webhook to allow the snapshot's deletion", func(ctx context.Context) bool {
		_, err := deleteSnapshot(ctx, prod, "--dry-run=server")
		return err == nil
	})
	if out, err := deleteSnapshot(ctx, prod); err != nil {
		t.Fatalf("kubectl delete volumesnapshot after the claim bound: %v\n%s", err, out)
	}
	waitFor(t, "the snapshot to be deleted", func(ctx context.Context) bool {
		_, err := world.Snaps.SnapshotV1().VolumeSnapshots(prod).Get(ctx, "snap", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if n := scrapeValue(t, wh.HTTPAddr, `snapshot_validation_webhook_admission_requests_total{operation="DELETE",reason="cross-namespace-restore",resource="volumesnapshots",result="denied"}`); n < 1 {
		t.Errorf("%v denials counted, want at least 1", n)
	}
}

// deleteSnapshot runs kubectl delete volumesnapshot snap in namespace,
// without waiting for the finalizers.
func deleteSnapshot(ctx context.Context, namespace string, extra ...string) (string, error) {
	return world.Cluster.Kubectl(ctx, append([]string{"delete", "volumesnapshot", "snap", "-n", namespace, "--wait=false"}, extra...)...)
}

// startGuardWebhook starts the webhook with the guard, after applying the
// guard's RBAC, with a certificate of a CA it registers with.
func startGuardWebhook(t *testing.T, ctx context.Context) *guardWebhook {
	t.Helper()
	if _, err := world.Cluster.Kubectl(ctx, "apply", "-f", filepath.Join(world.Root, "deploy", "overlays", "webhook-guard", "rbac.yaml")); err != nil {
		t.Fatal(err)
	}
	ca, certs := webhookCerts(t)
	wh, err := world.StartSnapshotWebhook(ctx, "snapshot-webhook-guard", certs.CertFile(), certs.KeyFile(), "--v=4", "--guard-cross-namespace-restores",
		"--feature-gates=CrossNamespaceSourceProvisioning=true", "--cross-namespace-snapshot")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wh.Stop(5 * time.Second) })
	return &guardWebhook{SnapshotWebhook: wh, caPEM: ca.PEM}
}

// guardWebhook is the webhook and the CA of its certificate.
type guardWebhook struct {
	*localenv.SnapshotWebhook
	caPEM []byte
}

// registerDeleteGuard registers wh for DELETE of volumesnapshots labeled
// webhookLabel=ns, as deploy/overlays/webhook-guard's second entry does
// (failurePolicy Fail here).
func registerDeleteGuard(t *testing.T, ctx context.Context, ns string, wh *guardWebhook) {
	t.Helper()
	registerHook(t, ctx, "guard-"+ns, "delete-guard.snapshot.storage.k8s.io", ns, wh.SnapshotWebhook, wh.caPEM, admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{"snapshot.storage.k8s.io"}, APIVersions: []string{"v1"},
			Resources: []string{"volumesnapshots"}},
	})
}
