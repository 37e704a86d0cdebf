package sidecar

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The tests of this file play issue 21's first defect: a restore whose
// CreateVolume answer was lost is parked, then its claim stops qualifying
// for the controller library (it names a volume, names another
// provisioner, or its StorageClass is deleted), so the library no longer
// calls Provision for it. The sidecar must still finish or undo the
// attempt itself: once the claim is deleted (or names another volume, or
// another provisioner), the volume the driver may have created is deleted
// and the source is released. Before the fix the volume was left in the
// driver with no PV, outside every quota.

// abandonedWhen parks a restore and lets change edit the claim (or the
// world). It waits until CreateVolume was sent twice more, so the change
// has reached the sidecar and no call from before it is still waiting for
// the driver (calls of one claim are sent one at a time); before the fix
// no call came. Then the driver answers, the claim is deleted, and the
// volume must be gone, the snapshot released, and no PV made.
func abandonedWhen(t *testing.T, change func(e *env, claim *v1.PersistentVolumeClaim)) {
	t.Helper()
	e, claim, lost := parkedRestore(t)
	change(e, claim)
	lost.retried(claim, 2)
	lost.answer()
	if err := e.kube.CoreV1().PersistentVolumeClaims("test").Delete(e.ctx, claim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the driver to hold no volume", func() bool { return len(e.driver.Volumes()) == 0 })
	e.waitFor("the snapshot to be released", func() bool {
		return !protected(e.snapshotFinalizers("prod", "snap"))
	})
	e.noPV(claim)
}

// updateClaim applies edit to the stored claim.
func (e *env) updateClaim(claim *v1.PersistentVolumeClaim, edit func(*v1.PersistentVolumeClaim)) {
	e.t.Helper()
	current, err := e.kube.CoreV1().PersistentVolumeClaims(claim.Namespace).Get(e.ctx, claim.Name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	edit(current)
	if _, err := e.kube.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(e.ctx, current, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func TestParkedRestoreIsUndoneWhenItsClaimNamesAVolume(t *testing.T) {
	abandonedWhen(t, func(e *env, claim *v1.PersistentVolumeClaim) {
		e.updateClaim(claim, func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeName = "any-name" })
	})
}

func TestParkedRestoreIsUndoneWhenItsClaimNamesAnotherProvisioner(t *testing.T) {
	abandonedWhen(t, func(e *env, claim *v1.PersistentVolumeClaim) {
		e.updateClaim(claim, func(c *v1.PersistentVolumeClaim) {
			c.Annotations["volume.kubernetes.io/storage-provisioner"] = "other.example.com"
		})
	})
}

// TestParkedRestoreIsUndoneWhenItsClassIsDeletedAndThenItsClaim: without
// its StorageClass the library hands the claim to nobody, not even once it
// is deleted; the sidecar undoes the attempt when the claim goes.
func TestParkedRestoreIsUndoneWhenItsClassIsDeletedAndThenItsClaim(t *testing.T) {
	e, claim, lost := parkedRestore(t)
	if err := e.kube.StorageV1().StorageClasses().Delete(e.ctx, className, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.kube.CoreV1().PersistentVolumeClaims("test").Delete(e.ctx, claim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	lost.retried(claim, 2)
	lost.answer()
	e.waitFor("the driver to hold no volume", func() bool { return len(e.driver.Volumes()) == 0 })
	e.waitFor("the snapshot to be released", func() bool {
		return !protected(e.snapshotFinalizers("prod", "snap"))
	})
	e.noPV(claim)
}

// TestParkedRestoreReleasesItsSourceWhenItsClaimNamesAVolume: a claim
// that names another volume will never get this attempt's volume: the
// attempt is undone at once, without waiting for the claim's deletion, so
// it no longer pins the snapshot.
func TestParkedRestoreReleasesItsSourceWhenItsClaimNamesAVolume(t *testing.T) {
	e, claim, lost := parkedRestore(t)
	e.updateClaim(claim, func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeName = "any-name" })
	lost.retried(claim, 2)
	lost.answer()
	e.waitFor("the driver to hold no volume", func() bool { return len(e.driver.Volumes()) == 0 })
	e.waitFor("the snapshot to be released", func() bool {
		return !protected(e.snapshotFinalizers("prod", "snap"))
	})
}

// TestAbandonKeepsAVolumeAPVNames: issue 21's tenth defect. Undoing an
// attempt deletes the volume CreateVolume returns only if it is this
// attempt's: here a PV already names it (as when a short
// --volume-name-uuid-length gives two claims one name), so deleting it
// would destroy that PV's data. It is kept, and the attempt ends.
func TestAbandonKeepsAVolumeAPVNames(t *testing.T) {
	e, claim, lost := parkedRestore(t)
	var id string
	for id = range e.driver.Volumes() {
	}
	other := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses"},
		Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: v1.PersistentVolumeSource{
			CSI: &v1.CSIPersistentVolumeSource{Driver: driverName, VolumeHandle: id}}}}
	if _, err := e.kube.CoreV1().PersistentVolumes().Create(e.ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.kube.CoreV1().PersistentVolumeClaims("test").Delete(e.ctx, claim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	lost.retried(claim, 2)
	lost.answer()
	e.waitFor("the snapshot to be released once the attempt ended", func() bool {
		return !protected(e.snapshotFinalizers("prod", "snap"))
	})
	if n := len(e.driver.DeleteVolumeRequests()); n != 0 {
		t.Errorf("%d DeleteVolume calls for a volume PV %s names, want 0", n, other.Name)
	}
	if _, ok := e.driver.Volumes()[id]; !ok {
		t.Errorf("volume %s, which PV %s names, was deleted", id, other.Name)
	}
}

// protected reports whether finalizers hold one of the provisioner's
// source protections.
func protected(finalizers []string) bool {
	return slices.ContainsFunc(finalizers, func(f string) bool { return strings.HasPrefix(f, "provisioner.storage.kubernetes.io/") })
}
