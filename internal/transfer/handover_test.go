package transfer

import (
	"errors"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// TestAnotherReplicaFinishesATransferItsLeaderStoppedMidway stops the
// controller that leads after it wrote the record of a step and while
// the step fails, with a second replica already running (both believe
// they lead for a moment, as in a leader election handover); the second
// finishes the transfer from the record alone.
func TestAnotherReplicaFinishesATransferItsLeaderStoppedMidway(t *testing.T) {
	tests := map[string]struct {
		kind, name       string
		kubeObjs         []runtime.Object
		snapObjs         []runtime.Object
		verb, resource   string
		namespace        string
		step             plan.Action
		checkTransferred func(h *harness)
	}{
		"a snapshot transfer stopped at its point of no return": {
			kind: transferv1alpha1.KindVolumeSnapshot, name: "foo", snapObjs: readySnapshot(),
			verb: "delete", resource: "volumesnapshots", namespace: "prod", step: plan.ActionDeleteSource,
			checkTransferred: checkSnapshotHandedOver,
		},
		"a claim transfer stopped creating the target claim": {
			kind: transferv1alpha1.KindPersistentVolumeClaim, name: "data", kubeObjs: boundClaim(),
			verb: "create", resource: "persistentvolumeclaims", namespace: "test", step: plan.ActionCreateTargetClaim,
			checkTransferred: checkClaimHandedOver,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, tc.kubeObjs, tc.snapObjs)
			refuse := func(a clienttesting.Action) error {
				if a.Matches(tc.verb, tc.resource) && a.GetNamespace() == tc.namespace {
					return errors.New("the API server is unreachable")
				}
				return nil
			}
			h.fault.Store(&refuse)

			h.createRequestAndAccept(tc.kind, tc.name, "")
			h.waitFor("the record of "+string(tc.step), func() bool {
				r := h.request()
				return r != nil && r.Status.Record != nil && r.Status.Record.Step == string(tc.step)
			})
			h.startController()
			h.stop()
			h.fault.Store(nil)

			h.waitFor("the request to be deleted after the transfer", func() bool { return h.request() == nil })
			tc.checkTransferred(h)
		})
	}
}

func checkSnapshotHandedOver(h *harness) {
	h.t.Helper()
	snaps := h.snap.SnapshotV1()
	if _, err := snaps.VolumeSnapshots("prod").Get(h.ctx, "foo", metav1.GetOptions{}); err == nil {
		h.t.Error("The source VolumeSnapshot is still there")
	}
	if _, err := snaps.VolumeSnapshotContents().Get(h.ctx, "snapcontent-s1", metav1.GetOptions{}); err == nil {
		h.t.Error("The source content is still there")
	}
	if _, err := snaps.VolumeSnapshots("test").Get(h.ctx, "bar", metav1.GetOptions{}); err != nil {
		h.t.Errorf("No target snapshot: %v", err)
	}
	c, err := snaps.VolumeSnapshotContents().Get(h.ctx, "snapcontent-transfer-r1", metav1.GetOptions{})
	if err != nil || *c.Spec.Source.SnapshotHandle != "snap-1" || c.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentDelete {
		h.t.Errorf("Target content = %+v, %v; want snap-1 under Delete", c, err)
	}
}

func checkClaimHandedOver(h *harness) {
	h.t.Helper()
	kube := h.kube.CoreV1()
	if _, err := kube.PersistentVolumeClaims("prod").Get(h.ctx, "data", metav1.GetOptions{}); err == nil {
		h.t.Error("The source claim is still there")
	}
	target, err := kube.PersistentVolumeClaims("test").Get(h.ctx, "bar", metav1.GetOptions{})
	if err != nil || target.Spec.VolumeName != "pv-1" || target.Status.Phase != v1.ClaimBound {
		h.t.Fatalf("Target claim = %+v, %v; want test/bar bound to pv-1", target, err)
	}
	pv, _ := kube.PersistentVolumes().Get(h.ctx, "pv-1", metav1.GetOptions{})
	if pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete || pv.Spec.ClaimRef.UID != target.UID {
		h.t.Errorf("PV = %+v, want Delete again and bound to test/bar", pv.Spec)
	}
}
