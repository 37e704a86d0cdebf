//go:build e2e

package e2e

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// sourceProtectionAdds is the series counting what a sidecar queued for
// source protection to decide on.
const sourceProtectionAdds = `workqueue_adds_total{name="source-protection"}`

// TestE2ESiblingWithTheGateOff: two drivers in one cluster, each with this
// sidecar, CrossNamespaceSourceProvisioning on for A and off for B (issue
// 21, defect 2). A restores Alice's prod/snap into Bob's test/restore,
// slowly; Alice deletes the snapshot meanwhile. B's source protection sees
// the deletion but must not judge A's claim with its own gate and take the
// protection off: the snapshot exists until the restore is bound, with
// Alice's data, and is deleted then.
func TestE2ESiblingWithTheGateOff(t *testing.T) {
	ensureGrantCRD(t)
	ctx := ctxFor(t)
	a, err := world.StartStack(ctx, "gate-on.csi.example.com", []string{"--restore-delay=15s"})
	if err != nil {
		t.Fatal(err)
	}
	sidecarA, err := world.StartSidecar(ctx, a, "gate-on", "--timeout=60s")
	if err != nil {
		t.Fatal(err)
	}
	b, err := world.StartStack(ctx, "gate-off.csi.example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	sidecarB, err := world.StartSidecar(ctx, b, "gate-off", "--feature-gates=CrossNamespaceSourceProvisioning=false")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B to start with the gate off", func(context.Context) bool {
		log, err := os.ReadFile(sidecarB.LogPath())
		return err == nil && strings.Contains(string(log), "crossNamespace=false")
	})

	class := storageClass(t, "gate-on", a.Name)
	prod, test := namespace(t, "prod"), namespace(t, "test")
	sourceWithSnapshot(t, a, prod, class, "snap", "alice's data")
	grant(t, prod, "allow", test, "snap")
	queuedByB := scrapeValue(t, sidecarB.HTTPAddr, sourceProtectionAdds)
	createPVC(t, test, "restore", class, restoring(prod, "snap"))
	// A protects the snapshot just before its CreateVolume, which the
	// driver holds for 15 s. Alice deletes the snapshot then.
	waitFor(t, "A to protect the snapshot for the restore", func(context.Context) bool {
		log, err := os.ReadFile(sidecarA.LogPath())
		return err == nil && strings.Contains(string(log), `"Protecting data source" pvc="`+test+`/restore"`)
	})
	if err := world.Snaps.SnapshotV1().VolumeSnapshots(prod).Delete(ctx, "snap", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Until the restore has its volume, the snapshot waits in deletion,
	// protected; B's source protection decides on it meanwhile. The
	// snapshot is read first: its protection may go once the PV exists,
	// before the PV controller binds the claim.
	claim, err := world.Kube.CoreV1().PersistentVolumeClaims(test).Get(ctx, "restore", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the restore's PV while the snapshot waits", func(ctx context.Context) bool {
		s, err := world.Snaps.SnapshotV1().VolumeSnapshots(prod).Get(ctx, "snap", metav1.GetOptions{})
		protected := err == nil && slices.ContainsFunc(s.Finalizers, func(f string) bool { return slices.Contains(datasource.Finalizers, f) })
		_, pvErr := world.Kube.CoreV1().PersistentVolumes().Get(ctx, "pvc-"+string(claim.UID), metav1.GetOptions{})
		switch {
		case pvErr == nil:
			return true
		case apierrors.IsNotFound(err):
			t.Fatal("the snapshot was deleted while it was being restored")
		case err == nil && !protected:
			t.Fatalf("the restore's protection was taken off the snapshot mid-restore: finalizers %v", s.Finalizers)
		}
		return false
	})
	if scrapeValue(t, sidecarB.HTTPAddr, sourceProtectionAdds) <= queuedByB {
		t.Error("B's source protection never decided on the snapshot being deleted: the case shows nothing")
	}
	restoredThenSnapshotGone(t, a, prod, test, "alice's data")
}
