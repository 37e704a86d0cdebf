package sidecar

import (
	"context"
	"testing"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/test/csitest"
)

func TestSnapshotNotReadyThenReadyIsProvisionedOnTheSnapshotEvent(t *testing.T) {
	e := startEnv(t, knownSnapshots("prod/foo-backup"))
	e.createSnapshot("prod", "foo-backup", false)
	e.createGrant("prod", "bar", "test", "foo-backup")
	claim := e.createClaim("test", "foo-testing", fromSnapshot("prod", "foo-backup"))
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", "VolumeSnapshot prod/foo-backup is not ready to use yet")
	e.noPV(claim)

	// The snapshot controller marks it ready; the backoff is one hour, so
	// only the snapshot event can re-queue the claim.
	snap, err := e.snaps.SnapshotV1().VolumeSnapshots("prod").Get(e.ctx, "foo-backup", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := true
	snap.Status.ReadyToUse = &ready
	if _, err := e.snaps.SnapshotV1().VolumeSnapshots("prod").Update(e.ctx, snap, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitForPV(claim)
	assertRestoredFrom(t, e, claim, snapshotHandle("prod", "foo-backup"))
}

func TestSnapshotIsProtectedWhileRestoringAndReleasedAfter(t *testing.T) {
	e, claim, release := startStory1InFlight(t)
	if f := e.snapshotFinalizers("prod", "foo-backup"); !hasString(f, datasource.CrossNamespaceSnapshotFinalizer) {
		t.Errorf("snapshot finalizers during CreateVolume = %v, want %s", f, datasource.CrossNamespaceSnapshotFinalizer)
	}
	close(release)
	e.waitForPV(claim)
	e.waitFor("the snapshot finalizer to be removed", func() bool {
		return !hasString(e.snapshotFinalizers("prod", "foo-backup"), datasource.CrossNamespaceSnapshotFinalizer)
	})
}

func TestSnapshotFinalizerIsReleasedWhenTheClaimIsDeleted(t *testing.T) {
	e := startEnv(t, knownSnapshots("prod/foo-backup"))
	e.createSnapshot("prod", "foo-backup", true)
	e.createGrant("prod", "bar", "test", "foo-backup")
	e.driver.SetCreateVolumeHook(func(context.Context, *csispec.CreateVolumeRequest) (*csispec.CreateVolumeResponse, error, bool) {
		return nil, errInvalid, true // a final error: the claim stays pending
	})
	claim := e.createClaim("test", "foo-testing", fromSnapshot("prod", "foo-backup"))
	e.waitFor("the snapshot finalizer", func() bool {
		return hasString(e.snapshotFinalizers("prod", "foo-backup"), datasource.CrossNamespaceSnapshotFinalizer)
	})
	if err := e.kube.CoreV1().PersistentVolumeClaims("test").Delete(e.ctx, claim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the snapshot finalizer to be removed", func() bool {
		return !hasString(e.snapshotFinalizers("prod", "foo-backup"), datasource.CrossNamespaceSnapshotFinalizer)
	})
}

func TestRequestBelowRestoreSizeIsRefused(t *testing.T) {
	e := startEnv(t, knownSnapshots("prod/foo-backup"))
	e.createSnapshot("prod", "foo-backup", true)
	e.createGrant("prod", "bar", "test", "foo-backup")
	claim := e.createClaim("test", "small", fromSnapshot("prod", "foo-backup"), withSize("10Mi"))
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", "request at least 1073741824 bytes")
	e.noPV(claim)
}

func TestDriverWithoutSnapshotCapabilityIsRefused(t *testing.T) {
	e := startEnv(t, knownSnapshots("prod/foo-backup"),
		driverWith(csitest.WithCapabilities(csispec.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME)))
	e.createSnapshot("prod", "foo-backup", true)
	claim := e.createClaim("prod", "restore", fromSnapshot("", "foo-backup"))
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", "cannot restore snapshots")
	e.noPV(claim)
}

func TestVolumeWithoutTheRequestedContentIsDeletedAgain(t *testing.T) {
	e := startEnv(t, knownSnapshots("prod/foo-backup"))
	e.createSnapshot("prod", "foo-backup", true)
	e.driver.SetCreateVolumeHook(func(_ context.Context, req *csispec.CreateVolumeRequest) (*csispec.CreateVolumeResponse, error, bool) {
		// A driver that ignores the content source and returns an empty volume.
		return &csispec.CreateVolumeResponse{Volume: &csispec.Volume{VolumeId: "empty-" + req.GetName(), CapacityBytes: 1 << 30}}, nil, true
	})
	claim := e.createClaim("prod", "restore", fromSnapshot("", "foo-backup"))
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", "without the requested data source")
	e.waitFor("DeleteVolume of the empty volume", func() bool {
		for _, r := range e.driver.DeleteVolumeRequests() {
			if r.GetVolumeId() == "empty-"+volumeName(claim) {
				return true
			}
		}
		return false
	})
	e.noPV(claim)
}

func (e *env) snapshotFinalizers(namespace, name string) []string {
	e.t.Helper()
	snap, err := e.snaps.SnapshotV1().VolumeSnapshots(namespace).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return snap.Finalizers
}

// The snapshot finalizer is shared by every provisioner: the sidecar of
// another driver added it for its own pending claim, and this one must not
// release it, although its cache trims that claim to what it needs.
func TestSnapshotFinalizerStaysWhileAnotherProvisionersClaimRestores(t *testing.T) {
	e := startEnv(t, knownSnapshots("prod/foo-backup"), oneProtectionWorker())
	e.createSnapshot("prod", "foo-backup", true)
	e.createGrant("prod", "bar", "test", "foo-backup")
	e.createClaim("test", "theirs", fromSnapshot("prod", "foo-backup"), func(c *v1.PersistentVolumeClaim) {
		c.Annotations["volume.kubernetes.io/storage-provisioner"] = "other.example.com"
	})
	e.claimsSeen() // the claim reaches this sidecar's cache
	snap, err := e.snaps.SnapshotV1().VolumeSnapshots("prod").Get(e.ctx, "foo-backup", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	snap.Finalizers = append(snap.Finalizers, datasource.SnapshotFinalizer) // as the other sidecar does
	if _, err := e.snaps.SnapshotV1().VolumeSnapshots("prod").Update(e.ctx, snap, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.protectionSeen() // this sidecar's source protection has decided on the update
	if f := e.snapshotFinalizers("prod", "foo-backup"); !hasString(f, datasource.SnapshotFinalizer) {
		t.Errorf("snapshot finalizers = %v: this sidecar released the finalizer another provisioner's pending claim needs", f)
	}
}
