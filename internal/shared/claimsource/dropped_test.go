package claimsource

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

func TestAClaimWhoseReferenceWasDroppedIsLeftAlone(t *testing.T) {
	dropped := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "test", Name: "foo-testing",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:dataSourceRef":{"f:namespace":{}}}}`)}}}}}
	for name, in := range map[string]Input{
		"gate on":  {Claim: dropped, CrossNamespace: true},
		"gate off": {Claim: dropped},
	} {
		t.Run(name, func(t *testing.T) {
			v := Admit(in)
			if v.Action != LeaveAlone || v.Reason != ReasonDataSourceRefDropped || v.HoldsSource() {
				t.Errorf("Admit() = %+v, want LeaveAlone/%s holding nothing", v, ReasonDataSourceRefDropped)
			}
		})
	}
	plain := dropped.DeepCopy()
	plain.ManagedFields = nil
	if v := Admit(Input{Claim: plain, Source: datasource.Source{}}); v.Action != Provision {
		t.Errorf("a claim that never named a source: Admit() = %+v, want Provision (an empty volume)", v)
	}
}
