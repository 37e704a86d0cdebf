package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kind is the kind of a VolumePopulator.
const Kind = "VolumePopulator"

// VolumePopulator registers a kind of volume data source: a claim whose
// spec.dataSourceRef names sourceKind's group and kind is left to the
// populator that created this object, and the volume-data-source-validator
// reports nothing about it (KEP-1495, "Proposal"). A populator creates one
// for each kind it understands.
//
// The schema is upstream's (kubernetes-csi/volume-data-source-validator),
// whose group was approved in Kubernetes API review, hence its approval
// annotation.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,path=volumepopulators,singular=volumepopulator
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=https://github.com/kubernetes/enhancements/pull/2934"
// +kubebuilder:printcolumn:name="Group",type=string,JSONPath=`.sourceKind.group`,description="API group of the data source kind"
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.sourceKind.kind`,description="Kind of the data source"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VolumePopulator struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// SourceKind is the kind of the data source this populator supports:
	// the apiGroup ("" for the core group) and kind a claim's
	// spec.dataSourceRef names.
	SourceKind metav1.GroupKind `json:"sourceKind"`
}

// VolumePopulatorList is a list of VolumePopulators.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type VolumePopulatorList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the VolumePopulators.
	Items []VolumePopulator `json:"items"`
}
