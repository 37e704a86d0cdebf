package sidecar

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// TestRestartKeepsTheFinalizerOfAPendingRestore: the sidecar starts (after
// an upgrade, an OOM kill or a failover) while a restore is pending and the
// snapshot carries the finalizer an earlier run put there. Until every
// cache that says whether the claim still restores it can be read (here the
// ReferenceGrant CRD is not served yet), the finalizer stays; it goes once
// the claim has its volume. The finalizer here is upstream's shared one, as
// a run before this sidecar had a finalizer of its own for restores naming
// the namespace left it: an upgrade neither drops its protection nor
// leaves it behind.
func TestRestartKeepsTheFinalizerOfAPendingRestore(t *testing.T) {
	var claim *v1.PersistentVolumeClaim
	e := startEnv(t, knownSnapshots("prod/snap"), grantCRDAbsent(), oneProtectionWorker(), beforeStart(recordReleases), beforeStart(func(e *env) {
		e.createSnapshot("prod", "snap", true)
		snap, err := e.snaps.SnapshotV1().VolumeSnapshots("prod").Get(e.ctx, "snap", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		snap.Finalizers = []string{datasource.SnapshotFinalizer}
		if _, err := e.snaps.SnapshotV1().VolumeSnapshots("prod").Update(e.ctx, snap, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.createGrant("prod", "bar", "test", "snap")
		claim = e.createClaim("test", "data", fromSnapshot("prod", "snap"))
	}))
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", "cannot check whether PersistentVolumeClaims")
	e.protectionSeen() // a release, lingering first, would have been made by now
	if r := e.releases.Load(); r != 0 {
		t.Fatalf("the snapshot was released %d times while the grant cache could not be read", r)
	}

	e.grantAPI.serve(grantResources)
	e.waitForPV(claim)
	e.waitFor("the snapshot to be released once the claim has its volume", func() bool {
		return len(protection(e.snapshotFinalizers("prod", "snap"))) == 0
	})
}
