package sidecar

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/provisioner"
	"github.com/xns-csi/csi-provisioner/test/csitest"
	"github.com/xns-csi/csi-provisioner/test/discoverytest"
)

// Behaviors the upstream csi-provisioner v6.4.0 has for ordinary claims,
// through the real wiring.

// servesStorageV1 makes the fake API server's discovery list the optional
// storage.k8s.io/v1 resources.
func servesStorageV1() envOption {
	return beforeStart(func(e *env) {
		e.kube.Resources = []*metav1.APIResourceList{
			discoverytest.Resources("storage.k8s.io/v1", "volumeattributesclasses", "volumeattachments"),
		}
	})
}

func TestVolumeAttributesClassAndIdentity(t *testing.T) {
	e := startEnv(t, servesStorageV1(), retryBackoff(100*time.Millisecond),
		driverWith(csitest.WithCapabilities(csispec.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
			csispec.ControllerServiceCapability_RPC_MODIFY_VOLUME)))
	gold := &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "gold"}, DriverName: driverName,
		Parameters: map[string]string{"iops": "3000"}}
	if _, err := e.kube.StorageV1().VolumeAttributesClasses().Create(e.ctx, gold, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	claim := e.createClaim("apps", "data", func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeAttributesClassName = &gold.Name })

	pv := e.waitForPV(claim)
	reqs := e.createRequests(claim)
	if got := reqs[len(reqs)-1].GetMutableParameters(); len(got) != 1 || got["iops"] != "3000" {
		t.Errorf("mutable parameters = %v, want the class's", got)
	}
	if pv.Spec.VolumeAttributesClassName == nil || *pv.Spec.VolumeAttributesClassName != "gold" {
		t.Errorf("PV VolumeAttributesClassName = %v, want gold", pv.Spec.VolumeAttributesClassName)
	}
	if id := pv.Spec.CSI.VolumeAttributes[provisioner.IdentityKey]; !strings.HasSuffix(id, "-"+driverName) {
		t.Errorf("PV provisioner identity = %q, want <ms>-<random>-%s", id, driverName)
	}
}

// A PV the API server refuses to save more than five times is saved in the
// end, and its volume is not deleted (CreateProvisionedPVLimiter; the
// library's default gives up after five tries ten seconds apart and deletes
// the volume).
func TestUnsavedVolumeIsRetriedUntilSaved(t *testing.T) {
	var refusals atomic.Int32
	e := startEnv(t, beforeStart(func(e *env) {
		e.kube.PrependReactor("create", "persistentvolumes", func(clienttesting.Action) (bool, runtime.Object, error) {
			if refusals.Add(1) <= 7 {
				return true, nil, apierrors.NewServiceUnavailable("etcd is busy")
			}
			return false, nil, nil
		})
	}))
	claim := e.createClaim("apps", "data")
	e.waitForPV(claim)
	if n := refusals.Load(); n < 8 {
		t.Errorf("the PV was created after %d attempts, want 8", n)
	}
	if reqs := e.driver.DeleteVolumeRequests(); len(reqs) != 0 {
		t.Errorf("the volume was deleted %d times while its PV could not be saved", len(reqs))
	}
}

// A released volume of a driver that attaches volumes is deleted only once
// no VolumeAttachment attaches it any more, and the wait is no failure. As upstream, the check reads
// the VolumeAttachment cache: the attachment is created before the claim
// (its PV's name is pvc-<claim UID>), so the cache shows it by the time the
// PV is released, as it does in a cluster, where the attachment exists
// while a pod uses the volume, long before its claim is deleted.
func TestAttachedVolumeIsDeletedOnlyWhenDetached(t *testing.T) {
	e := startEnv(t, servesStorageV1(), retryBackoff(100*time.Millisecond),
		driverWith(csitest.WithCapabilities(csispec.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
			csispec.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME)))
	pvName := "pvc-uid-apps-data"
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "csi-1"},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: driverName, NodeName: "node-1",
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pvName}}}
	if _, err := e.kube.StorageV1().VolumeAttachments().Create(e.ctx, va, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	claim := e.createClaim("apps", "data")
	pv := e.waitForPV(claim)
	if pv.Name != pvName {
		t.Fatalf("PV %s, want %s (the attachment names it)", pv.Name, pvName)
	}
	pv.Status.Phase = v1.VolumeReleased
	if _, err := e.kube.CoreV1().PersistentVolumes().UpdateStatus(e.ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// As upstream v6.4.0: a Normal event says the deletion waits, and no
	// VolumeFailedDelete warning is recorded for it.
	e.waitFor("the deletion of the attached volume to wait for its detach", func() bool {
		events, _ := e.kube.CoreV1().Events("").List(e.ctx, metav1.ListOptions{})
		for _, ev := range events.Items {
			if ev.Type == v1.EventTypeNormal && ev.Reason == "VolumeDelete" && strings.Contains(ev.Message, "is still attached to node node-1, waiting for detach") {
				return true
			}
		}
		return false
	})
	events, err := e.kube.CoreV1().Events("").List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events.Items {
		if ev.Reason == "VolumeFailedDelete" {
			t.Errorf("a warning for a volume that waits for its detach: %s %s: %s", ev.Type, ev.Reason, ev.Message)
		}
	}
	if n := len(e.driver.DeleteVolumeRequests()); n != 0 {
		t.Fatalf("DeleteVolume was called %d times while the volume was attached", n)
	}
	if err := e.kube.StorageV1().VolumeAttachments().Delete(e.ctx, va.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("DeleteVolume once detached", func() bool { return len(e.driver.DeleteVolumeRequests()) == 1 })
}

// With upstream's RBAC (no "patch" on volumesnapshots) a restore protects
// its snapshot with an update; with neither verb it restores unprotected
// and says so once on the claim.
func TestRestoreWithUpstreamRBAC(t *testing.T) {
	for _, tc := range []struct {
		name      string
		forbidden []string
		protected bool
	}{
		{name: "update instead of patch", forbidden: []string{"patch"}, protected: true},
		{name: "neither patch nor update", forbidden: []string{"patch", "update"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var protectedDuringCreate atomic.Bool
			e := startEnv(t, knownSnapshots("test/backup"), beforeStart(func(e *env) {
				e.snaps.PrependReactor("*", "volumesnapshots", func(a clienttesting.Action) (bool, runtime.Object, error) {
					if hasString(tc.forbidden, a.GetVerb()) {
						return true, nil, apierrors.NewForbidden(a.GetResource().GroupResource(), "backup", errors.New("RBAC"))
					}
					return false, nil, nil
				})
			}))
			e.driver.SetCreateVolumeHook(func(context.Context, *csispec.CreateVolumeRequest) (*csispec.CreateVolumeResponse, error, bool) {
				protectedDuringCreate.Store(hasString(e.snapshotFinalizers("test", "backup"), datasource.SnapshotFinalizer))
				return nil, nil, false
			})
			e.createSnapshot("test", "backup", true)
			claim := e.createClaim("test", "restored", func(c *v1.PersistentVolumeClaim) {
				group := datasource.SnapshotGroup
				c.Spec.DataSource = &v1.TypedLocalObjectReference{APIGroup: &group, Kind: datasource.SnapshotKind, Name: "backup"}
			})
			e.waitForPV(claim)
			if protectedDuringCreate.Load() != tc.protected {
				t.Errorf("snapshot protected during CreateVolume = %v, want %v", protectedDuringCreate.Load(), tc.protected)
			}
			if !tc.protected {
				e.waitForEvent(claim, v1.EventTypeWarning, "SourceProtectionForbidden", "may not patch or update VolumeSnapshot test/backup")
			}
		})
	}
}
