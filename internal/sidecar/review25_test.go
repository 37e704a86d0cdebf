package sidecar

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"

	"github.com/xns-csi/csi-provisioner/test/csitest"
)

// Review of issue 25 (#1588): a volume still attached is the library's
// *controller.VolumeInUseError, which deleteVolumeOperation recognizes with
// a plain type assertion (sig-storage-lib-external-provisioner v13.1.0,
// controller.go): whatever stands between the library and
// Provisioner.Delete must hand it over unwrapped, in every configuration.
// The reference is upstream v6.4.0's canDeleteVolume (controller.go): any
// VolumeAttachment naming the PV, whatever its attacher or status, makes
// the deletion wait; a VolumeAttachment list that fails is a failure.

// deleteAnswer is a provisioner whose Delete answers err; nothing else of
// it is called.
type deleteAnswer struct {
	libProvisioner
	err error
}

func (d deleteAnswer) Delete(context.Context, *v1.PersistentVolume) error { return d.err }

// The sidecar's wrappers, in each combination of --node-deployment and
// --enable-capacity the build can make (build.go: withCapacityRefresh
// around withNodeChecks), give the library the provisioner's
// VolumeInUseError itself, and a failure as a failure.
func TestReview25WrappersHandOverVolumeInUse(t *testing.T) {
	inUse := &controller.VolumeInUseError{Reason: "persistentvolume pv-1 is still attached to node node-1, waiting for detach"}
	failed := errors.New("failed to list volumeattachments: forbidden")
	chains := map[string]func(libProvisioner) libProvisioner{
		"no wrapper":        func(p libProvisioner) libProvisioner { return p },
		"--node-deployment": func(p libProvisioner) libProvisioner { return nodeChecks{libProvisioner: p} },
		"--enable-capacity": func(p libProvisioner) libProvisioner { return capacityRefresh{libProvisioner: p} },
		"both, as build wraps them": func(p libProvisioner) libProvisioner {
			return capacityRefresh{libProvisioner: nodeChecks{libProvisioner: p}}
		},
	}
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"}}
	for name, wrap := range chains {
		t.Run(name, func(t *testing.T) {
			err := wrap(deleteAnswer{err: inUse}).Delete(context.Background(), pv)
			if got, ok := err.(*controller.VolumeInUseError); !ok || got != inUse { //nolint:errorlint // as the library tests it
				t.Errorf("Delete() = %#v, want the provisioner's *controller.VolumeInUseError unwrapped", err)
			}
			err = wrap(deleteAnswer{err: failed}).Delete(context.Background(), pv)
			if _, ok := err.(*controller.VolumeInUseError); ok || !errors.Is(err, failed) { //nolint:errorlint // as the library tests it
				t.Errorf("Delete() = %#v, want the failure", err)
			}
		})
	}
}

// attachingDriver is a driver with PUBLISH_UNPUBLISH_VOLUME (and
// GET_CAPACITY, for --enable-capacity), holding volume vol-1. It must come
// after withCapacity, whose capabilities it replaces.
func attachingDriver() envOption {
	return driverWith(csitest.WithVolume("vol-1", gib), csitest.WithCapabilities(csispec.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csispec.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME, csispec.ControllerServiceCapability_RPC_GET_CAPACITY))
}

// releasedVolume creates the released PV pv-1 of volume vol-1 of driver,
// with reclaim policy Delete, in zone a.
func (e *env) releasedVolume(driver string, annotations map[string]string) *v1.PersistentVolume {
	e.t.Helper()
	if annotations == nil {
		annotations = map[string]string{"pv.kubernetes.io/provisioned-by": driver}
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-1", Annotations: annotations},
		Spec: v1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete, StorageClassName: className,
			AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			ClaimRef:               &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "apps", Name: "gone", UID: "uid-gone"},
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: "vol-1"}},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: zoneKey, Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}}}}}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeReleased},
	}
	created, err := e.kube.CoreV1().PersistentVolumes().Create(e.ctx, pv, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return created
}

// attach creates a VolumeAttachment of the PV pv on node-a by attacher.
func (e *env) attach(name, attacher, pv string) *storagev1.VolumeAttachment {
	e.t.Helper()
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: attacher, NodeName: thisNode,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}},
		Status: storagev1.VolumeAttachmentStatus{Attached: true}}
	created, err := e.kube.StorageV1().VolumeAttachments().Create(e.ctx, va, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return created
}

// volumeEvents returns the events on the PV named pv, "type reason:
// message" each.
func (e *env) volumeEvents(pv string) []string {
	e.t.Helper()
	events, err := e.kube.CoreV1().Events("").List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range events.Items {
		if ev.InvolvedObject.Kind == "PersistentVolume" && ev.InvolvedObject.Name == pv {
			out = append(out, ev.Type+" "+ev.Reason+": "+ev.Message)
		}
	}
	return out
}

// waitForVolumeEvent waits for an event on the PV that starts with prefix.
func (e *env) waitForVolumeEvent(pv, prefix string) {
	e.t.Helper()
	e.waitFor("event "+prefix+" on "+pv, func() bool {
		for _, ev := range e.volumeEvents(pv) {
			if strings.HasPrefix(ev, prefix) {
				return true
			}
		}
		return false
	})
}

// expectWaitingForDetach checks what the library did while pv-1 is
// attached: a Normal VolumeDelete event with upstream's message, no
// VolumeFailedDelete warning, no DeleteVolume, the PV still there.
func (e *env) expectWaitingForDetach() {
	e.t.Helper()
	e.waitForVolumeEvent("pv-1", "Normal VolumeDelete: persistentvolume pv-1 is still attached to node node-a, waiting for detach")
	for _, ev := range e.volumeEvents("pv-1") {
		if strings.Contains(ev, "VolumeFailedDelete") {
			e.t.Errorf("a warning for a volume that waits for its detach: %s", ev)
		}
	}
	if n := len(e.driver.DeleteVolumeRequests()); n != 0 {
		e.t.Errorf("DeleteVolume was called %d times while the volume was attached", n)
	}
	if _, err := e.kube.CoreV1().PersistentVolumes().Get(e.ctx, "pv-1", metav1.GetOptions{}); err != nil {
		e.t.Errorf("the PV of an attached volume: %v", err)
	}
}

// expectDeletedOnceDetached deletes the attachment and waits for the
// volume's DeleteVolume and the PV's removal.
func (e *env) expectDeletedOnceDetached(va *storagev1.VolumeAttachment) {
	e.t.Helper()
	if err := e.kube.StorageV1().VolumeAttachments().Delete(e.ctx, va.Name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.waitFor("DeleteVolume of vol-1 once detached", func() bool {
		for _, r := range e.driver.DeleteVolumeRequests() {
			if r.GetVolumeId() == "vol-1" {
				return true
			}
		}
		return false
	})
	e.waitFor("the PV removed", func() bool {
		_, err := e.kube.CoreV1().PersistentVolumes().Get(e.ctx, "pv-1", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

// The library's real controller, built as the sidecar builds it, waits for
// the detach with a Normal event in every configuration, then deletes.
func TestReview25AttachedVolumeWaitsInEveryConfiguration(t *testing.T) {
	configs := []struct {
		name string
		opts []envOption
	}{
		{name: "controller deployment"},
		{name: "--enable-capacity", opts: []envOption{withCapacity(newCapacities(map[string]int64{"a": 10 * gib}))}},
		{name: "--node-deployment", opts: []envOption{onNodeA()}},
		{name: "--node-deployment and --enable-capacity", opts: []envOption{onNodeA(), withCapacity(newCapacities(map[string]int64{"a": 10 * gib}))}},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			e := startEnv(t, append(c.opts, servesStorageV1(), retryBackoff(100*time.Millisecond), attachingDriver())...)
			va := e.attach("csi-1", driverName, "pv-1")
			e.releasedVolume(driverName, nil)
			e.expectWaitingForDetach()
			e.expectDeletedOnceDetached(va)
		})
	}
}

// As upstream's canDeleteVolume, which does not look at the attacher, a
// VolumeAttachment of another attacher that names the PV holds the
// deletion too.
func TestReview25AnotherAttachersAttachmentHoldsTheDeletion(t *testing.T) {
	e := startEnv(t, servesStorageV1(), retryBackoff(100*time.Millisecond), attachingDriver())
	va := e.attach("other-1", "other.csi.example.com", "pv-1")
	e.releasedVolume(driverName, nil)
	e.expectWaitingForDetach()
	e.expectDeletedOnceDetached(va)
}

// An in-tree PV migrated to the driver (provisioned by kubernetes.io/aws-ebs,
// handed over to ebs.csi.aws.com) waits for its detach the same way.
func TestReview25MigratedVolumeWaitsForDetach(t *testing.T) {
	const ebs = "ebs.csi.aws.com"
	e := startEnv(t, servesStorageV1(), retryBackoff(100*time.Millisecond), attachingDriver(), driverWith(csitest.WithName(ebs)))
	va := e.attach("csi-1", ebs, "pv-1")
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-1", Annotations: map[string]string{
			"pv.kubernetes.io/provisioned-by": "kubernetes.io/aws-ebs", "pv.kubernetes.io/migrated-to": ebs}},
		Spec: v1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete, StorageClassName: "gp2",
			AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			ClaimRef:               &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "apps", Name: "gone", UID: "uid-gone"},
			PersistentVolumeSource: v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeReleased},
	}
	if _, err := e.kube.CoreV1().PersistentVolumes().Create(e.ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.expectWaitingForDetach()
	e.expectDeletedOnceDetached(va)
}

// Unknown is not "no": while the VolumeAttachments cannot be read (the API
// not served, or the list forbidden), the deletion is a failure, with
// upstream's "failed to list volumeattachments" warning, never an in-use
// wait nor a DeleteVolume.
func TestReview25UnreadableAttachmentsFailTheDeletion(t *testing.T) {
	forbidden := beforeStart(func(e *env) {
		e.kube.PrependReactor("list", "volumeattachments", func(a clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(a.GetResource().GroupResource(), "", errors.New("RBAC"))
		})
	})
	for name, opts := range map[string][]envOption{
		"the VolumeAttachment API not served": nil,
		"listing VolumeAttachments forbidden": {servesStorageV1(), forbidden},
	} {
		t.Run(name, func(t *testing.T) {
			e := startEnv(t, append(opts, retryBackoff(100*time.Millisecond), attachingDriver())...)
			e.releasedVolume(driverName, nil)
			e.waitForVolumeEvent("pv-1", "Warning VolumeFailedDelete: failed to list volumeattachments")
			for _, ev := range e.volumeEvents("pv-1") {
				if strings.HasPrefix(ev, "Normal VolumeDelete") {
					t.Errorf("an unreadable attachment cache taken for an attachment: %s", ev)
				}
			}
			if n := len(e.driver.DeleteVolumeRequests()); n != 0 {
				t.Errorf("DeleteVolume was called %d times while the attachments could not be read", n)
			}
		})
	}
}
