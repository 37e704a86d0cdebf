package sidecar

import (
	"context"
	"testing"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOrdinaryProvisioning(t *testing.T) {
	e := startEnv(t)
	e.createClass("with-params", map[string]string{"type": "ssd", "csi.storage.k8s.io/fstype": "xfs"})
	claim := e.createClaim("apps", "data", func(c *v1.PersistentVolumeClaim) {
		class := "with-params"
		c.Spec.StorageClassName = &class
	})

	pv := e.waitForPV(claim)
	reqs := e.createRequests(claim)
	if len(reqs) != 1 {
		t.Fatalf("driver got %d CreateVolume calls for the claim, want 1", len(reqs))
	}
	req := reqs[0]
	if req.GetCapacityRange().GetRequiredBytes() != 1<<30 {
		t.Errorf("required bytes = %d, want 1Gi", req.GetCapacityRange().GetRequiredBytes())
	}
	if len(req.GetParameters()) != 1 || req.GetParameters()["type"] != "ssd" {
		t.Errorf("parameters = %v, want only the driver's own", req.GetParameters())
	}
	if fs := req.GetVolumeCapabilities()[0].GetMount().GetFsType(); fs != "xfs" {
		t.Errorf("fsType = %q, want xfs", fs)
	}
	if req.GetVolumeContentSource() != nil {
		t.Errorf("a claim without data source must not send a content source, got %v", req.GetVolumeContentSource())
	}

	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != driverName || pv.Spec.CSI.VolumeHandle == "" || pv.Spec.CSI.FSType != "xfs" {
		t.Errorf("PV CSI source = %+v", pv.Spec.CSI)
	}
	if ref := pv.Spec.ClaimRef; ref == nil || ref.Name != "data" || ref.Namespace != "apps" || ref.UID != claim.UID {
		t.Errorf("PV claimRef = %+v, want apps/data", pv.Spec.ClaimRef)
	}
	if pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete || pv.Spec.StorageClassName != "with-params" {
		t.Errorf("PV reclaim policy %q / class %q", pv.Spec.PersistentVolumeReclaimPolicy, pv.Spec.StorageClassName)
	}
	if !hasString(pv.Finalizers, "external-provisioner.volume.kubernetes.io/finalizer") {
		t.Errorf("PV finalizers = %v, want the provisioner's deletion finalizer", pv.Finalizers)
	}
	if pv.Annotations["pv.kubernetes.io/provisioned-by"] != driverName {
		t.Errorf("PV annotations = %v", pv.Annotations)
	}
}

func TestReleasedVolumeIsDeletedInTheDriver(t *testing.T) {
	e := startEnv(t)
	claim := e.createClaim("apps", "data")
	pv := e.waitForPV(claim)
	handle := pv.Spec.CSI.VolumeHandle
	if _, ok := e.driver.Volumes()[handle]; !ok {
		t.Fatalf("driver has no volume %s", handle)
	}

	// What the PV controller does when the claim is deleted.
	pv.Status.Phase = v1.VolumeReleased
	if _, err := e.kube.CoreV1().PersistentVolumes().UpdateStatus(e.ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("DeleteVolume of "+handle, func() bool { _, ok := e.driver.Volumes()[handle]; return !ok })
	e.waitFor("PV deletion", func() bool {
		_, err := e.kube.CoreV1().PersistentVolumes().Get(e.ctx, pv.Name, metav1.GetOptions{})
		return err != nil
	})
}

func TestPopulatorSourceIsLeftToThePopulator(t *testing.T) {
	e := startEnv(t)
	claim := e.createClaim("apps", "imported", fromRef("hello.example.com", "Hello", "h1"))
	// The event is sent by the very decision to leave the claim alone.
	e.waitForEvent(claim, v1.EventTypeNormal, "WaitingForPopulator", "Hello.hello.example.com apps/h1")
	e.noPV(claim)
	if n := len(e.createRequests(claim)); n != 0 {
		t.Errorf("driver got %d CreateVolume calls for a populator's claim, want 0", n)
	}
}

func TestClaimOfAnotherProvisionerIsIgnored(t *testing.T) {
	e := startEnv(t, oneProvisioningWorker())
	claim := e.createClaim("apps", "foreign", func(c *v1.PersistentVolumeClaim) {
		c.Annotations["volume.kubernetes.io/storage-provisioner"] = "other.example.com"
	})
	e.claimsSeen() // the ProvisionController has decided on the claim
	e.noPV(claim)
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestVolumeSmallerThanRequestedIsDeletedAgain(t *testing.T) {
	e := startEnv(t)
	e.driver.SetCreateVolumeHook(func(_ context.Context, req *csispec.CreateVolumeRequest) (*csispec.CreateVolumeResponse, error, bool) {
		return &csispec.CreateVolumeResponse{Volume: &csispec.Volume{VolumeId: "short-" + req.GetName(), CapacityBytes: 1 << 20}}, nil, true
	})
	claim := e.createClaim("apps", "data")
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", "less than the 1073741824 requested")
	e.waitFor("DeleteVolume of the short volume", func() bool {
		for _, r := range e.driver.DeleteVolumeRequests() {
			if r.GetVolumeId() == "short-"+volumeName(claim) {
				return true
			}
		}
		return false
	})
	e.noPV(claim)
}
