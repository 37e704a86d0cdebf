package transfer

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// boundClaim is prod/data bound to pv-1 (Delete).
func boundClaim() []runtime.Object {
	return []runtime.Object{
		&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "prod", UID: "c1"},
			Spec: v1.PersistentVolumeClaimSpec{VolumeName: "pv-1", StorageClassName: ptr.To("csi"), AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}},
			Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound}},
		&v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"},
			Spec: v1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
				ClaimRef: &v1.ObjectReference{Namespace: "prod", Name: "data", UID: "c1"}}},
	}
}

func TestClaimTransferCompletes(t *testing.T) {
	h := newHarness(t, boundClaim(), nil)
	h.createRequestAndAccept(transferv1alpha1.KindPersistentVolumeClaim, "data", "")
	h.waitFor("the request to be deleted after the transfer", func() bool { return h.request() == nil })
	kube := h.kube.CoreV1()
	if _, err := kube.PersistentVolumeClaims("prod").Get(h.ctx, "data", metav1.GetOptions{}); err == nil {
		t.Error("The source claim is still there")
	}
	target, err := kube.PersistentVolumeClaims("test").Get(h.ctx, "bar", metav1.GetOptions{})
	if err != nil || target.Spec.VolumeName != "pv-1" || *target.Spec.StorageClassName != "csi" || target.Status.Phase != v1.ClaimBound {
		t.Fatalf("Target claim = %+v, %v; want test/bar bound to pv-1", target, err)
	}
	pv, _ := kube.PersistentVolumes().Get(h.ctx, "pv-1", metav1.GetOptions{})
	if pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete || pv.Spec.ClaimRef.Namespace != "test" || pv.Spec.ClaimRef.UID != target.UID {
		t.Errorf("PV = %+v, want Delete again and bound to test/bar", pv.Spec)
	}
	checkNoEventQuotesTheToken(t, h.eventsSoFar())
}

func TestClaimUsedByARunningPodWaits(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app-0", Namespace: "prod"}, Status: v1.PodStatus{Phase: v1.PodRunning},
		Spec: v1.PodSpec{Volumes: []v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}}
	h := newHarness(t, append(boundClaim(), pod), nil)
	h.createRequestAndAccept(transferv1alpha1.KindPersistentVolumeClaim, "data", "")
	h.waitFor("SourceInUse", func() bool { return h.transferredReason() == plan.ReasonSourceInUse })
	if _, err := h.kube.CoreV1().PersistentVolumeClaims("prod").Get(h.ctx, "data", metav1.GetOptions{}); err != nil {
		t.Fatalf("The claim in use was deleted: %v", err)
	}
	if err := h.kube.CoreV1().Pods("prod").Delete(h.ctx, "app-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the request to be deleted after the transfer", func() bool { return h.request() == nil })
	if _, err := h.kube.CoreV1().PersistentVolumeClaims("test").Get(h.ctx, "bar", metav1.GetOptions{}); err != nil {
		t.Errorf("No target claim: %v", err)
	}
}
