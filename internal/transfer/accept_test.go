package transfer

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/transfer/match"
	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// TestTheAcceptIsPinnedAtTheFirstMatchAndShownTheOffer (issue 23 defects 8
// and 11): while the transfer waits before it begins (a pod uses the
// claim), the accept already shows what will arrive, and the request is
// pinned to it: an accept elsewhere quoting the same token (a token that
// leaked) is told the request is taken.
func TestTheAcceptIsPinnedAtTheFirstMatchAndShownTheOffer(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app-0", Namespace: "prod"}, Status: v1.PodStatus{Phase: v1.PodRunning},
		Spec: v1.PodSpec{Volumes: []v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}}
	h := newHarness(t, append(boundClaim(), pod), nil)
	h.createRequestAndAccept(transferv1alpha1.KindPersistentVolumeClaim, "data", "")
	h.waitFor("SourceInUse", func() bool { return h.transferredReason() == plan.ReasonSourceInUse })

	var offered *transferv1alpha1.TransferOffer
	h.waitFor("the accept to show the offer", func() bool {
		a, err := h.api.TransferV1alpha1().StorageTransferAccepts("test").Get(h.ctx, "accept-name", metav1.GetOptions{})
		offered = a.Status.Offered
		return err == nil && offered != nil
	})
	if offered.Kind != transferv1alpha1.KindPersistentVolumeClaim || offered.Source != "prod/data" || offered.TargetName != "bar" ||
		offered.Size == nil || offered.Size.String() != "1Gi" || offered.ClassName != "csi" {
		t.Errorf("status.offered = %+v, want the claim prod/data of class csi, 1Gi, as bar", offered)
	}
	if r := h.request(); r.Status.AcceptUID != "a1" || r.Status.Record != nil {
		t.Fatalf("Request status = %+v, want pinned to accept a1 before the transfer begins", r.Status)
	}

	rival := &transferv1alpha1.StorageTransferAccept{ObjectMeta: metav1.ObjectMeta{Name: "accept-name", Namespace: "dev", UID: "a2"},
		Spec: transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: "prod", RequestName: "request-name", RequestToken: h.request().Spec.Token}}
	if _, err := h.api.TransferV1alpha1().StorageTransferAccepts("dev").Create(h.ctx, rival, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the rival to be told the request is taken", func() bool {
		a, err := h.api.TransferV1alpha1().StorageTransferAccepts("dev").Get(h.ctx, "accept-name", metav1.GetOptions{})
		c := meta.FindStatusCondition(a.Status.Conditions, transferv1alpha1.ConditionMatched)
		return err == nil && c != nil && c.Reason == match.ReasonTakenByAnother
	})
	if c := meta.FindStatusCondition(h.request().Status.Conditions, transferv1alpha1.ConditionMatched); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Request's Matched = %+v, want still True (not ambiguous)", c)
	}
}
