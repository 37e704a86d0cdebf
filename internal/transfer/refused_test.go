package transfer

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// TestATargetRefusedBeforeThePointOfNoReturnWaitsWithTheSourceIntact: a
// create of the target claim that the API server refuses (the target
// namespace gone: NotFound, issue 23 defect 4; a quota: Forbidden, defect
// 2) does not count as done. The transfer says TargetRefused, keeps the
// source, and goes on once the target namespace admits the claim.
func TestATargetRefusedBeforeThePointOfNoReturnWaitsWithTheSourceIntact(t *testing.T) {
	refusals := map[string]error{
		"the target namespace is gone": apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "test"),
		"a quota refuses it": apierrors.NewForbidden(schema.GroupResource{Resource: "persistentvolumeclaims"}, "bar",
			errExceededQuota),
	}
	for name, refusal := range refusals {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, boundClaim(), nil)
			refuse := func(a clienttesting.Action) error {
				if a.Matches("create", "persistentvolumeclaims") && a.GetNamespace() == "test" {
					return refusal
				}
				return nil
			}
			h.fault.Store(&refuse)
			h.createRequestAndAccept(transferv1alpha1.KindPersistentVolumeClaim, "data", "")
			h.waitFor("TargetRefused", func() bool { return h.transferredReason() == plan.ReasonTargetRefused })
			src, err := h.kube.CoreV1().PersistentVolumeClaims("prod").Get(h.ctx, "data", metav1.GetOptions{})
			if err != nil || src.DeletionTimestamp != nil {
				t.Fatalf("Source claim = %+v, %v; want it intact while the target is refused", src, err)
			}
			h.fault.Store(nil)
			h.nudge()
			h.waitFor("the request to be deleted after the transfer", func() bool { return h.request() == nil })
			target, err := h.kube.CoreV1().PersistentVolumeClaims("test").Get(h.ctx, "bar", metav1.GetOptions{})
			if err != nil || target.Status.Phase != v1.ClaimBound {
				t.Errorf("Target claim = %+v, %v; want test/bar bound", target, err)
			}
		})
	}
}

// TestASnapshotTargetIsAdmittedBeforeTheSourceIsDeleted (issue 23
// defects 2 and 17): the target namespace admits the target VolumeSnapshot
// (a server-side dry run) before the source is deleted, and the target
// snapshot is created only after: refused, the transfer waits with the
// source intact and nothing restorable in the target namespace.
func TestASnapshotTargetIsAdmittedBeforeTheSourceIsDeleted(t *testing.T) {
	h := newHarness(t, nil, readySnapshot())
	refuse := func(a clienttesting.Action) error {
		if a.Matches("create", "volumesnapshots") && a.GetNamespace() == "test" {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "volumesnapshots"}, "bar", errExceededQuota)
		}
		return nil
	}
	h.fault.Store(&refuse)
	h.createRequestAndAccept(transferv1alpha1.KindVolumeSnapshot, "foo", "")
	h.waitFor("TargetRefused", func() bool { return h.transferredReason() == plan.ReasonTargetRefused })
	if _, err := h.snap.SnapshotV1().VolumeSnapshots("prod").Get(h.ctx, "foo", metav1.GetOptions{}); err != nil {
		t.Fatalf("The source snapshot is gone while the target refuses it: %v", err)
	}
	if r := h.request(); r.Status.Record == nil || r.Status.Record.PointOfNoReturn {
		t.Errorf("Record = %+v, want one before the point of no return", r.Status.Record)
	}
	if s, err := h.snap.SnapshotV1().VolumeSnapshots("test").Get(h.ctx, "bar", metav1.GetOptions{}); err == nil {
		t.Errorf("A target snapshot %+v exists before the point of no return", s.ObjectMeta)
	}
	h.fault.Store(nil)
	h.nudge()
	h.waitFor("the request to be deleted after the transfer", func() bool { return h.request() == nil })
	checkSnapshotHandedOver(h)
}

// TestTheAcceptSeesWhyTheTransferStopped (issue 23 defect 13): the accept
// carries the request's Transferred condition, so the target's owner sees
// why the transfer waits; and a request whose accept is gone no longer
// says it matches.
func TestTheAcceptSeesWhyTheTransferStopped(t *testing.T) {
	h := newHarness(t, boundClaim(), nil)
	refuse := func(a clienttesting.Action) error {
		if a.Matches("create", "persistentvolumeclaims") && a.GetNamespace() == "test" {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "persistentvolumeclaims"}, "bar", errExceededQuota)
		}
		return nil
	}
	h.fault.Store(&refuse)
	h.createRequestAndAccept(transferv1alpha1.KindPersistentVolumeClaim, "data", "")
	h.waitFor("the accept to say TargetRefused", func() bool {
		a, err := h.api.TransferV1alpha1().StorageTransferAccepts("test").Get(h.ctx, "accept-name", metav1.GetOptions{})
		c := meta.FindStatusCondition(a.Status.Conditions, transferv1alpha1.ConditionTransferred)
		return err == nil && c != nil && c.Reason == plan.ReasonTargetRefused && strings.Contains(c.Message, "exceeded quota")
	})
	if err := h.api.TransferV1alpha1().StorageTransferAccepts("test").Delete(h.ctx, "accept-name", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the request to say its accept is gone", func() bool {
		r := h.request()
		if r == nil {
			return false
		}
		c := meta.FindStatusCondition(r.Status.Conditions, transferv1alpha1.ConditionMatched)
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "gone")
	})
}

// nudge edits the request so that the controller looks at it now, not
// within 30 s (as it does after a refusal).
func (h *harness) nudge() {
	h.t.Helper()
	h.waitFor("a label on the request", func() bool {
		r := h.request().DeepCopy()
		r.Labels = map[string]string{"nudged": "yes"}
		_, err := h.api.TransferV1alpha1().StorageTransferRequests("prod").Update(h.ctx, r, metav1.UpdateOptions{})
		return err == nil // a conflict with the controller's write: again
	})
}

var errExceededQuota = quotaError("exceeded quota: quota, requested: requests.storage=1Gi, used: requests.storage=0, limited: requests.storage=0")

type quotaError string

func (e quotaError) Error() string { return string(e) }
