package cachetrim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestClaimSourceKeepsWhatTheSourceDecisionReads(t *testing.T) {
	got, err := ClaimSource(fullClaim(map[string]string{annStorageProvisioner: driver}))
	if err != nil {
		t.Fatal(err)
	}
	want := &v1.PersistentVolumeClaim{ObjectMeta: identityOf(nil), Spec: v1.PersistentVolumeClaimSpec{VolumeName: "pv-1",
		DataSourceRef: &v1.TypedObjectReference{APIGroup: ptr.To("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot", Name: "s", Namespace: ptr.To("src")}},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trimmed claim (-want +got):\n%s", diff)
	}
	again, _ := ClaimSource(got.(*v1.PersistentVolumeClaim).DeepCopy())
	if diff := cmp.Diff(got, again); diff != "" {
		t.Errorf("trimming a trimmed claim changed it (-first +second):\n%s", diff)
	}
}

// TestClaimSourceKeepsTheTraceOfADroppedReference: without its managed
// fields, a claim whose dataSourceRef the API server dropped would look
// like a claim without a source (datasource.RefDropped).
func TestClaimSourceKeepsTheTraceOfADroppedReference(t *testing.T) {
	dropped := []metav1.ManagedFieldsEntry{{Manager: "kubectl", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:dataSourceRef":{}}}`)}}}
	claim := fullClaim(nil)
	claim.Spec.DataSourceRef, claim.ManagedFields = nil, dropped
	got, _ := ClaimSource(claim)
	if diff := cmp.Diff(dropped, got.(*v1.PersistentVolumeClaim).ManagedFields); diff != "" {
		t.Errorf("managed fields (-want +got):\n%s", diff)
	}
}
