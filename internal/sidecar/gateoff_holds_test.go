package sidecar

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// TestClaimRefusedWithTheGateOffDoesNotHoldTheSnapshot: with the gate off a
// claim naming another namespace's snapshot is never provisioned, grant or
// not, so it must not keep that snapshot's finalizer (left by an earlier
// restore, say while the gate was on): "in use" is the provisioning decision.
func TestClaimRefusedWithTheGateOffDoesNotHoldTheSnapshot(t *testing.T) {
	e := startEnv(t, gateOff(), knownSnapshots("prod/snap"))
	e.createSnapshot("prod", "snap", true)
	e.createGrant("prod", "bar", "test", "snap")
	x := e.createClaim("test", "x", fromSnapshot("prod", "snap"))
	e.waitForEvent(x, v1.EventTypeWarning, "CrossNamespaceSourceDisabled", "feature gate is off")

	snap, err := e.snaps.SnapshotV1().VolumeSnapshots("prod").Get(e.ctx, "snap", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// From earlier restores, say while the gate was on (and, for upstream's
	// shared finalizer, before this sidecar had one of its own for them).
	snap.Finalizers = []string{datasource.SnapshotFinalizer, datasource.CrossNamespaceSnapshotFinalizer}
	if _, err := e.snaps.SnapshotV1().VolumeSnapshots("prod").Update(e.ctx, snap, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the snapshot finalizers to be released", func() bool {
		return len(protection(e.snapshotFinalizers("prod", "snap"))) == 0
	})
	e.noPV(x)
}
