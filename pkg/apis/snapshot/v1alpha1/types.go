package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kind is the kind of a VolumeSnapshotLink: the kind a claim's
// spec.dataSourceRef names (with the group GroupName) to be populated from
// the link's snapshot, and the kind a ReferenceGrant's "from" names to let
// links in a namespace use snapshots in its own.
const Kind = "VolumeSnapshotLink"

// The condition types of a VolumeSnapshotLink's status.conditions. Their
// status is True, False or Unknown; the reason (CamelCase) and the message
// (for people) say why.
const (
	// ConditionResolved is True when the VolumeSnapshot that spec.source
	// names exists, and False when it does not (the reason says what is
	// missing). For a VolumeSnapshot in another namespace it is Unknown
	// until a ReferenceGrant allows the link (reason ReferenceGrantMissing
	// or ReferenceGrantUnavailable): a link does not tell whether a
	// snapshot it may not use exists.
	ConditionResolved = "Resolved"
	// ConditionAllowed is True when the link's namespace may use the
	// source VolumeSnapshot: a VolumeSnapshot in another namespace needs a
	// ReferenceGrant in that namespace whose "from" names
	// {group: snapshot.storage.k8s.io, kind: VolumeSnapshotLink, namespace:
	// <the link's>} and whose "to" names the VolumeSnapshot, by name or for
	// the whole namespace (KEP-3294, "Example flow of how VolumeSnapshotLink
	// API works"). False when no grant allows it; Unknown when grants cannot
	// be read.
	ConditionAllowed = "Allowed"
)

// VolumeSnapshotLink names a VolumeSnapshot, possibly in another namespace,
// that PersistentVolumeClaims in the link's namespace may name as their
// data source (spec.dataSourceRef {apiGroup: snapshot.storage.k8s.io, kind:
// VolumeSnapshotLink, name: <link>}). It is KEP-3294's alternative to a
// namespace in the claim's own reference: the claim stays in its
// namespace, and the link is what crosses it, checked against the
// ReferenceGrants of the snapshot's namespace.
//
// The CRD needs the api-approved.kubernetes.io annotation because its group
// ends in k8s.io; this API has not been through Kubernetes API review.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,path=volumesnapshotlinks,singular=volumesnapshotlink,shortName=vslink
// +kubebuilder:subresource:status
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, experimental-only"
// +kubebuilder:printcolumn:name="Source Namespace",type=string,JSONPath=`.spec.source.namespace`,description="Namespace of the VolumeSnapshot; empty for the link's own"
// +kubebuilder:printcolumn:name="Source Name",type=string,JSONPath=`.spec.source.name`,description="Name of the VolumeSnapshot"
// +kubebuilder:printcolumn:name="Resolved",type=string,JSONPath=`.status.conditions[?(@.type=="Resolved")].status`,description="Whether the VolumeSnapshot exists"
// +kubebuilder:printcolumn:name="Allowed",type=string,JSONPath=`.status.conditions[?(@.type=="Allowed")].status`,description="Whether a ReferenceGrant allows the link to use the VolumeSnapshot"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VolumeSnapshotLink struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the VolumeSnapshot. It cannot be changed after creation:
	// a claim may already be populated from it, and its grant was checked
	// for this source; to link another snapshot, create another link.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: create another VolumeSnapshotLink to link another VolumeSnapshot"
	Spec VolumeSnapshotLinkSpec `json:"spec"`

	// Status is what the controller last observed of the link's source.
	// +optional
	Status VolumeSnapshotLinkStatus `json:"status,omitempty"`
}

// VolumeSnapshotLinkSpec describes attributes of a volume snapshot link.
type VolumeSnapshotLinkSpec struct {
	// Source is the VolumeSnapshot the link names. This field is immutable
	// after creation.
	Source VolumeSnapshotLinkSource `json:"source"`
}

// VolumeSnapshotLinkSource specifies a reference to a VolumeSnapshot.
type VolumeSnapshotLinkSource struct {
	// Name is the name of the VolumeSnapshot (a DNS-1123 subdomain, as every
	// object name).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// Namespace is the namespace of the snapshot (a DNS-1123 label). When
	// unspecified, the local namespace is inferred; an empty string is
	// refused, so that "unspecified" reads the same to every client and
	// the spec compares equal across updates.
	// Note that when a namespace is specified, a ReferenceGrant object is
	// required in the referent namespace to allow that namespace's owner to
	// accept the reference. See the ReferenceGrant documentation for
	// details.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
}

// VolumeSnapshotLinkStatus is what the controller last observed of a
// VolumeSnapshotLink, as conditions (Kubernetes API conventions).
type VolumeSnapshotLinkStatus struct {
	// ObservedGeneration is the metadata.generation the conditions were
	// computed for.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are the link's Resolved and Allowed conditions, one of
	// each type at most.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// VolumeSnapshotLinkList is a list of VolumeSnapshotLinks.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type VolumeSnapshotLinkList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the VolumeSnapshotLinks of the list.
	Items []VolumeSnapshotLink `json:"items"`
}

// SourceNamespace returns the namespace of the link's VolumeSnapshot:
// spec.source.namespace, or the link's own namespace when that is
// unspecified.
func (l *VolumeSnapshotLink) SourceNamespace() string {
	if l.Spec.Source.Namespace != "" {
		return l.Spec.Source.Namespace
	}
	return l.Namespace
}
