//go:build faults

package faults

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/test/localdriver"
)

// TestSnapshotDeletedMidRestore: the source snapshot's deletion is
// requested while restores of it run. Claims that existed before the
// request are all restored (the finalizer holds the snapshot for them);
// restores asked for afterwards, also within the second of the request,
// are refused with an event; the snapshot goes once the earlier ones are
// done and the refused ones deleted. The snapshot class retains the
// driver's snapshot: with Delete, the snapshot-controller deletes the
// content regardless of our finalizer (docs/guarantees.md, "Not (yet)
// guaranteed").
func TestSnapshotDeletedMidRestore(t *testing.T) {
	sc := newScenario(t, "snapdel", scenarioOptions{retain: true})
	sc.st.setFaults(t, localdriver.FaultRule{Method: "CreateVolume", Delay: "2s"})
	sc.burst(t, 10)
	waitCreatesStarted(t, sc, 2)
	retry(t, "deleting the snapshot", func(ctx context.Context) error {
		return world.Snaps.SnapshotV1().VolumeSnapshots(sc.src).Delete(ctx, "snap", metav1.DeleteOptions{})
	})
	t.Logf("snapshot deletion requested with %d CreateVolume calls in flight", len(sc.st.countCalls(t, "CreateVolume").inFlight))
	var refused []*claim
	for _, c := range sc.burst(t, 10) {
		if c.kind == restore || c.kind == xrestore || c.kind == xdenied {
			c.refusedBecause = "is being deleted|does not exist|no ReferenceGrant"
			refused = append(refused, c)
		}
	}
	sc.reconcile(t)
	// The snapshot-controller keeps a snapshot that a pending claim of its
	// own namespace names (its own source-protection finalizer): the
	// refused claims go first.
	for _, c := range refused {
		sc.deleteClaim(t, c)
	}
	var finalizers []string
	waitFor(t, "the snapshot to be gone", settleBound, func(ctx context.Context) bool {
		s, err := world.Snaps.SnapshotV1().VolumeSnapshots(sc.src).Get(ctx, "snap", metav1.GetOptions{})
		if err == nil {
			finalizers = s.Finalizers
		}
		return apierrors.IsNotFound(err)
	})
	t.Logf("the snapshot is gone (its last finalizers: %v)", finalizers)
}

// TestSnapshotContentDeletedMidRestore: the VolumeSnapshotContent of the
// source snapshot is deleted while restores of it run, and more restores
// are asked for. Its deletion waits while its snapshot is bound to it, so
// every restore finishes; once the claims are bound the snapshot is
// deleted too (Delete policy), and then the content and the driver's
// snapshot go: nothing was deleted while a restore needed it.
func TestSnapshotContentDeletedMidRestore(t *testing.T) {
	sc := newScenario(t, "contentdel", scenarioOptions{})
	sc.st.setFaults(t, localdriver.FaultRule{Method: "CreateVolume", Delay: "2s"})
	sc.burst(t, 10)
	inFlight := waitInFlight(t, sc, 2)
	var content string
	retry(t, "deleting the snapshot's content", func(ctx context.Context) error {
		snap, err := world.Snaps.SnapshotV1().VolumeSnapshots(sc.src).Get(ctx, "snap", metav1.GetOptions{})
		if err != nil {
			return err
		}
		content = *snap.Status.BoundVolumeSnapshotContentName
		return world.Snaps.SnapshotV1().VolumeSnapshotContents().Delete(ctx, content, metav1.DeleteOptions{})
	})
	t.Logf("content %s deletion requested with %d CreateVolume calls in flight", content, inFlight)
	sc.burst(t, 10)
	sc.reconcile(t)

	retry(t, "deleting the snapshot", func(ctx context.Context) error {
		return world.Snaps.SnapshotV1().VolumeSnapshots(sc.src).Delete(ctx, "snap", metav1.DeleteOptions{})
	})
	waitFor(t, "the snapshot, its content and the driver's snapshot to be gone", settleBound, func(ctx context.Context) bool {
		_, errSnap := world.Snaps.SnapshotV1().VolumeSnapshots(sc.src).Get(ctx, "snap", metav1.GetOptions{})
		_, errContent := world.Snaps.SnapshotV1().VolumeSnapshotContents().Get(ctx, content, metav1.GetOptions{})
		return apierrors.IsNotFound(errSnap) && apierrors.IsNotFound(errContent) && sc.st.countCalls(t, "DeleteSnapshot").codes["OK"] > 0
	})
}
