package sidecar

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/test/csitest"
)

func TestSameNamespaceCloneProtectsItsSourceUntilThePVExists(t *testing.T) {
	e := startEnv(t)
	source := e.createClaim("apps", "source")
	sourcePV := e.waitForPV(source)
	e.bind(source, sourcePV.Name) // what the PV controller does

	entered, release := make(chan struct{}), make(chan struct{})
	e.driver.SetCreateVolumeHook(blockFirstCreate(entered, release))
	clone := e.createClaim("apps", "clone", fromRef("", "PersistentVolumeClaim", "source"))
	e.await(entered, "CreateVolume")
	if f := e.claimFinalizers("apps", "source"); !hasString(f, datasource.CloneFinalizer) {
		t.Errorf("source finalizers during CreateVolume = %v, want %s", f, datasource.CloneFinalizer)
	}
	close(release)
	e.waitForPV(clone)
	reqs := e.createRequests(clone)
	if got := reqs[len(reqs)-1].GetVolumeContentSource().GetVolume().GetVolumeId(); got != sourcePV.Spec.CSI.VolumeHandle {
		t.Errorf("clone content source = %q, want the source volume %q", got, sourcePV.Spec.CSI.VolumeHandle)
	}
	e.waitFor("the clone finalizer to be removed", func() bool {
		return !hasString(e.claimFinalizers("apps", "source"), datasource.CloneFinalizer)
	})
}

func TestCloneOfAnUnboundClaimWaitsForItsBinding(t *testing.T) {
	e := startEnv(t, driverWith(csitest.WithVolume("vol-src", 1<<30)))
	source := e.createClaim("apps", "source", func(c *v1.PersistentVolumeClaim) {
		c.Annotations["volume.kubernetes.io/storage-provisioner"] = "other.example.com" // not ours: stays unbound
	})
	clone := e.createClaim("apps", "clone", fromRef("", "PersistentVolumeClaim", "source"))
	e.waitForEvent(clone, v1.EventTypeWarning, "ProvisioningFailed", "is not bound yet")
	e.noPV(clone)

	// The source gets bound; with the one-hour backoff only that event can
	// re-queue the clone.
	e.createVolume(sourceVolume("pv-src", "vol-src"))
	e.bind(source, "pv-src")
	e.waitForPV(clone)
}

// TestCloneIsRequeuedWhenItsSourceVolumeIsSeenAfterItsSourceClaim: the
// claim cache may show the source claim Bound before the PV cache holds its
// volume. The clone, re-queued by the claim, is then refused "not bound
// yet" as before, and that unchanged refusal is held back: only the
// volume's arrival can re-queue it, as resync is off and the backoff is an
// hour (issue 21, defect 8).
func TestCloneIsRequeuedWhenItsSourceVolumeIsSeenAfterItsSourceClaim(t *testing.T) {
	e := startEnv(t, oneProvisioningWorker(), driverWith(csitest.WithVolume("vol-src", 1<<30)))
	source := e.createClaim("apps", "source", func(c *v1.PersistentVolumeClaim) {
		c.Annotations["volume.kubernetes.io/storage-provisioner"] = "other.example.com" // not ours: bound by the test
	})
	clone := e.createClaim("apps", "clone", fromRef("", "PersistentVolumeClaim", "source"))
	e.waitForEvent(clone, v1.EventTypeWarning, "ProvisioningFailed", "is not bound yet")

	e.bindClaim(source, "pv-src")
	e.claimsSeen() // the clone was decided again, on the claim Bound and no PV
	pv := sourceVolume("pv-src", "vol-src")
	pv.Spec.ClaimRef, pv.Status.Phase = claimRefTo(source), v1.VolumeBound
	e.createVolume(pv)
	e.waitForPV(clone)
}

// TestCloneWaitsForItsSourceVolumeToBeBound: the PV cache may show the
// source's volume bound to it but not Bound yet. The clone waits, as
// upstream's getPVCSource refuses such a volume, and the volume's update
// re-queues it (issue 21, defect 9).
func TestCloneWaitsForItsSourceVolumeToBeBound(t *testing.T) {
	e := startEnv(t, driverWith(csitest.WithVolume("vol-src", 1<<30)))
	source := e.createClaim("apps", "source", func(c *v1.PersistentVolumeClaim) {
		c.Annotations["volume.kubernetes.io/storage-provisioner"] = "other.example.com" // not ours: bound by the test
	})
	pv := sourceVolume("pv-src", "vol-src")
	pv.Spec.ClaimRef, pv.Status.Phase = claimRefTo(source), v1.VolumePending
	e.createVolume(pv)
	e.bindClaim(source, "pv-src")
	clone := e.createClaim("apps", "clone", fromRef("", "PersistentVolumeClaim", "source"))
	e.waitForEvent(clone, v1.EventTypeWarning, "ProvisioningFailed", `PersistentVolume "pv-src" has phase "Pending"`)
	e.noPV(clone)

	e.bindVolume(source, "pv-src")
	e.waitForPV(clone)
}

// sourceVolume is a 1Gi PV of this driver, bound to no claim yet.
func sourceVolume(name, handle string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driverName, VolumeHandle: handle}},
		},
	}
}

func (e *env) createVolume(pv *v1.PersistentVolume) {
	e.t.Helper()
	if _, err := e.kube.CoreV1().PersistentVolumes().Create(e.ctx, pv, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// bind binds a claim and a PV as the PV controller does: the PV first
// (its claimRef and phase), then the claim.
func (e *env) bind(claim *v1.PersistentVolumeClaim, pvName string) {
	e.t.Helper()
	e.bindVolume(claim, pvName)
	e.bindClaim(claim, pvName)
}

// bindVolume marks a PV bound to a claim, as the PV controller does first.
func (e *env) bindVolume(claim *v1.PersistentVolumeClaim, pvName string) {
	e.t.Helper()
	pv, err := e.kube.CoreV1().PersistentVolumes().Get(e.ctx, pvName, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	pv.Spec.ClaimRef, pv.Status.Phase = claimRefTo(claim), v1.VolumeBound
	if _, err := e.kube.CoreV1().PersistentVolumes().Update(e.ctx, pv, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// claimRefTo is the claimRef the PV controller writes on a volume bound to
// claim.
func claimRefTo(claim *v1.PersistentVolumeClaim) *v1.ObjectReference {
	return &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID}
}

// bindClaim marks a claim bound to a PV, as the PV controller does once the
// PV is bound to it.
func (e *env) bindClaim(claim *v1.PersistentVolumeClaim, pvName string) {
	e.t.Helper()
	c, err := e.kube.CoreV1().PersistentVolumeClaims(claim.Namespace).Get(e.ctx, claim.Name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	c.Spec.VolumeName = pvName
	c.Status.Phase = v1.ClaimBound
	if _, err := e.kube.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(e.ctx, c, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) claimFinalizers(namespace, name string) []string {
	e.t.Helper()
	c, err := e.kube.CoreV1().PersistentVolumeClaims(namespace).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return c.Finalizers
}
