package datasource

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRefDropped(t *testing.T) {
	// What kube-apiserver records for a claim created with a namespaced
	// dataSourceRef while the gate is off (trimmed to the spec).
	setRef := metav1.ManagedFieldsEntry{Manager: "kubectl-create", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:accessModes":{},"f:dataSourceRef":{".":{},"f:apiGroup":{},"f:kind":{},"f:name":{},"f:namespace":{}},"f:resources":{}}}`)}}
	plain := metav1.ManagedFieldsEntry{Manager: "kubectl-create", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:accessModes":{},"f:resources":{}}}`)}}
	group := SnapshotGroup
	ref := &v1.TypedObjectReference{APIGroup: &group, Kind: SnapshotKind, Name: "snap"}
	tests := []struct {
		name    string
		managed []metav1.ManagedFieldsEntry
		ref     *v1.TypedObjectReference
		want    bool
	}{
		{"set by a manager and gone from the spec", []metav1.ManagedFieldsEntry{plain, setRef}, nil, true},
		{"set and kept", []metav1.ManagedFieldsEntry{setRef}, ref, false},
		{"never set", []metav1.ManagedFieldsEntry{plain}, nil, false},
		{"no managed fields (trimmed from a cache)", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{ManagedFields: tt.managed}, Spec: v1.PersistentVolumeClaimSpec{DataSourceRef: tt.ref}}
			if got := RefDropped(claim); got != tt.want {
				t.Errorf("RefDropped() = %v, want %v", got, tt.want)
			}
		})
	}
}
