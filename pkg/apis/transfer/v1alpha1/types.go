package v1alpha1

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The kinds of object a StorageTransferRequest can transfer
// (spec.source.kind).
const (
	// KindVolumeSnapshot is a snapshot.storage.k8s.io VolumeSnapshot.
	KindVolumeSnapshot = "VolumeSnapshot"
	// KindPersistentVolumeClaim is a core PersistentVolumeClaim.
	KindPersistentVolumeClaim = "PersistentVolumeClaim"
)

// Phase is where a transfer is, in status.phase of both the request and
// the accept.
// +kubebuilder:validation:Enum=Pending;Matched;Transferring;Completed;Failed
type Phase string

// The phases of a transfer.
const (
	// PhasePending: no accept matches the request yet (or the request has
	// no token yet).
	PhasePending Phase = "Pending"
	// PhaseMatched: an accept matches; the transfer waits for its source
	// (e.g. ready, not in use) before it changes anything.
	PhaseMatched Phase = "Matched"
	// PhaseTransferring: the controller is moving the object; the write-
	// ahead record in the request's status says what it has done.
	PhaseTransferring Phase = "Transferring"
	// PhaseCompleted: the object is in the target namespace and gone from
	// the source namespace.
	PhaseCompleted Phase = "Completed"
	// PhaseFailed: the transfer stopped; everything it changed was rolled
	// back (the conditions say why).
	PhaseFailed Phase = "Failed"
)

// The condition types of both kinds' status.conditions. Their reason
// (CamelCase) and message (for people) say why.
const (
	// ConditionMatched is True when a request and an accept match by the
	// seed's four equalities, False when something prevents it (e.g. the
	// token differs), Unknown while the request has no token.
	ConditionMatched = "Matched"
	// ConditionTransferred is True once the transfer has completed, False
	// while it waits, is under way or has failed.
	ConditionTransferred = "Transferred"
	// ConditionPastPointOfNoReturn, on a request, is True once its source
	// has been deleted by the transfer (or its owner): the object is then
	// handed over or given back, never rolled back. With a Transferred
	// reason of NeedsAttention or BoundToUnexpectedObject, the transfer
	// is stuck there and needs a person (metric
	// storage_transfer_stuck_past_point_of_no_return).
	ConditionPastPointOfNoReturn = "PastPointOfNoReturn"
)

// StorageTransferRequest offers an object of its namespace (a
// VolumeSnapshot or a PersistentVolumeClaim) to the namespace of the
// StorageTransferAccept named spec.acceptName that names this request and
// quotes its token. The controller sets spec.token; the owner of the
// source namespace hands it to the owner of the target namespace, who
// quotes it in the accept.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,path=storagetransferrequests,singular=storagetransferrequest,shortName=str
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.source.kind`,description="Kind of the object offered"
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.source.name`,description="Name of the object offered"
// +kubebuilder:printcolumn:name="Accept",type=string,JSONPath=`.spec.acceptName`,description="Name of the StorageTransferAccept that may take it"
// +kubebuilder:printcolumn:name="Target Namespace",type=string,JSONPath=`.status.targetNamespace`,description="Namespace of the matching accept"
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.targetName`,description="Name of the object in the target namespace"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type StorageTransferRequest struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says what is offered to whom. It cannot be changed after
	// creation, except spec.token, which the controller sets once.
	// +kubebuilder:validation:XValidation:rule="self.source == oldSelf.source && self.acceptName == oldSelf.acceptName && self.targetName == oldSelf.targetName && has(self.secrets) == has(oldSelf.secrets) && (!has(self.secrets) || self.secrets == oldSelf.secrets) && has(self.targetNamespace) == has(oldSelf.targetNamespace) && (!has(self.targetNamespace) || self.targetNamespace == oldSelf.targetNamespace)",message="spec is immutable (except spec.token, set once by the controller): create another StorageTransferRequest"
	// +kubebuilder:validation:XValidation:rule="!has(oldSelf.token) || (has(self.token) && self.token == oldSelf.token)",message="spec.token is set once and cannot be changed or removed"
	// +kubebuilder:validation:XValidation:rule="has(self.tokenSecretRef) == has(oldSelf.tokenSecretRef) && (!has(self.tokenSecretRef) || self.tokenSecretRef == oldSelf.tokenSecretRef)",message="spec.tokenSecretRef cannot be added, changed or removed: create another StorageTransferRequest"
	// +kubebuilder:validation:XValidation:rule="!has(self.token) || !has(self.tokenSecretRef)",message="spec.token and spec.tokenSecretRef exclude each other: the token is either in the spec or in the Secret"
	Spec StorageTransferRequestSpec `json:"spec"`

	// Status is the progress of the transfer and its write-ahead record.
	// +optional
	Status StorageTransferRequestStatus `json:"status,omitempty"`
}

// StorageTransferRequestSpec is the seed's request: the source object, the
// secrets the target needs, the accept's name, the target's name and the
// token.
type StorageTransferRequestSpec struct {
	// Source is the object offered, in the request's namespace.
	Source TransferSource `json:"source"`
	// Secrets are the secrets the backend needs for the source object
	// (for a VolumeSnapshot: its content's deletion secret), each in the
	// request's own namespace: a request naming a secret of another
	// namespace is refused (the controller would hand it to the driver on
	// the request's behalf). The target object never depends on them: the
	// target names its own on the accept (spec.deletionSecretName). The
	// controller never copies secrets between namespaces.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Secrets []TransferSecret `json:"secrets,omitempty"`
	// AcceptName is the name of the StorageTransferAccept that may take
	// the object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	AcceptName string `json:"acceptName"`
	// TargetName is the name of the object in the target namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	TargetName string `json:"targetName"`
	// TargetNamespace, when set, is the only namespace whose accept may
	// take the object: a token that leaks is of no use elsewhere.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	TargetNamespace string `json:"targetNamespace,omitempty"`
	// Token is the secret the accept must quote (spec.requestToken). The
	// controller sets it when it is empty: 128 bits from a cryptographic
	// random source, base64url. Once set it cannot be changed.
	// +optional
	// +kubebuilder:validation:MinLength=22
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]+$`
	Token string `json:"token,omitempty"`
	// TokenSecretRef, instead of spec.token, names a Secret of the
	// request's namespace that holds the token, so that the token is in no
	// spec (audit logs, backups, GitOps repositories). The controller
	// reads it (it needs a RoleBinding in the namespace: see
	// docs/transfer.md); it never writes it. Until the transfer begins,
	// deleting the Secret or changing its token withdraws the offer, as
	// deleting the request does; from then on the Secret is not read.
	// +optional
	TokenSecretRef *TokenSecretReference `json:"tokenSecretRef,omitempty"`
}

// TokenSecretType is the type a Secret holding a transfer token must
// have: the controller reads no other Secret, so it cannot be made to
// compare anything but a token.
const TokenSecretType = GroupName + "/token"

// TokenSecretKey is the key of the token in a Secret of TokenSecretType.
const TokenSecretKey = "token"

// TokenSecretReference names a Secret of the referring object's own
// namespace, of type transfer.xns-csi.io/token, whose key "token" holds
// a token: 22 to 128 base64url characters (a trailing newline is
// ignored).
type TokenSecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// TransferSource names the object a request offers.
type TransferSource struct {
	// Kind is VolumeSnapshot (snapshot.storage.k8s.io) or
	// PersistentVolumeClaim (core).
	// +kubebuilder:validation:Enum=VolumeSnapshot;PersistentVolumeClaim
	Kind string `json:"kind"`
	// Name is the object's name in the request's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// TransferSecret names a secret and what it is for, as a StorageClass or
// VolumeSnapshotClass parameter names it.
type TransferSecret struct {
	// Name of the secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Namespace of the secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// Type is the parameter the secret stands for, e.g.
	// csi.storage.k8s.io/snapshotter-secret-name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Type string `json:"type"`
}

// StorageTransferRequestStatus is the progress of a transfer, written by
// the controller.
type StorageTransferRequestStatus struct {
	// ObservedGeneration is the metadata.generation the status was
	// computed for.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase is where the transfer is.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// Conditions are the Matched and Transferred conditions.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	// TargetNamespace is the namespace of the accept the request matched.
	// +optional
	TargetNamespace string `json:"targetNamespace,omitempty"`
	// AcceptUID is the UID of the accept the request matched: a transfer
	// under way continues with that accept only.
	// +optional
	AcceptUID string `json:"acceptUID,omitempty"`
	// Record is the write-ahead record: written before every step that
	// changes an object, so that a controller restarted at any point
	// finishes or rolls back the transfer from it.
	// +optional
	Record *TransferRecord `json:"record,omitempty"`
	// CompletionTime is when the transfer completed or failed; the request
	// and the accept are deleted --retention after it.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// TransferRecord is what a transfer has to remember across steps: the
// source as it was, the policies to restore and the names of the objects
// it creates.
type TransferRecord struct {
	// Step is the last step the controller has begun (written before the
	// step's change).
	Step string `json:"step"`
	// RollingBack is set once the transfer is being undone.
	// +optional
	RollingBack bool `json:"rollingBack,omitempty"`
	// RollbackReason and RollbackMessage say why the transfer is being
	// undone; the Failed condition repeats them.
	// +optional
	RollbackReason string `json:"rollbackReason,omitempty"`
	// +optional
	RollbackMessage string `json:"rollbackMessage,omitempty"`
	// PointOfNoReturn is set, once and for good, with the first step that
	// cannot be undone: the source's deletion, or a step taken after its
	// owner deleted it. From then on the transfer is not rolled back: it
	// hands the object over, or gives it back (Returning).
	// +optional
	PointOfNoReturn bool `json:"pointOfNoReturn,omitempty"`
	// HandedOver is set, with the step that restores the original policy
	// on what the target now owns, once the hand-over is decided: from
	// then on the target's owner owns the object, and deleting it deletes
	// it as that policy says.
	// +optional
	HandedOver bool `json:"handedOver,omitempty"`
	// Returning is set once the target has refused the object after the
	// point of no return (its namespace gone or terminating, its name
	// taken, its admission refusing): the object is given back to the
	// source namespace, under the source's name. ReturnMessage says why.
	// +optional
	Returning bool `json:"returning,omitempty"`
	// +optional
	ReturnMessage string `json:"returnMessage,omitempty"`
	// SourceUID is the UID of the source object.
	SourceUID string `json:"sourceUID"`

	// SourceContentName is the VolumeSnapshotContent bound to the source
	// VolumeSnapshot.
	// +optional
	SourceContentName string `json:"sourceContentName,omitempty"`
	// TargetContentName is the pre-provisioned VolumeSnapshotContent the
	// controller creates for the target VolumeSnapshot.
	// +optional
	TargetContentName string `json:"targetContentName,omitempty"`
	// OriginalDeletionPolicy is the source content's deletionPolicy, set
	// on the target content at the end.
	// +optional
	OriginalDeletionPolicy string `json:"originalDeletionPolicy,omitempty"`
	// SnapshotHandle is the backend snapshot both contents name.
	// +optional
	SnapshotHandle string `json:"snapshotHandle,omitempty"`
	// Driver is the CSI driver of the snapshot.
	// +optional
	Driver string `json:"driver,omitempty"`
	// VolumeSnapshotClassName is the class of the source snapshot.
	// +optional
	VolumeSnapshotClassName string `json:"volumeSnapshotClassName,omitempty"`
	// SourceVolumeMode is the source content's spec.sourceVolumeMode, and
	// AllowVolumeModeChange its
	// snapshot.storage.kubernetes.io/allow-volume-mode-change annotation:
	// both are carried to the target content.
	// +optional
	SourceVolumeMode *v1.PersistentVolumeMode `json:"sourceVolumeMode,omitempty"`
	// +optional
	AllowVolumeModeChange string `json:"allowVolumeModeChange,omitempty"`
	// SourceDeletionSecret is the source content's deletion secret
	// (namespace/name), for the content that gives the snapshot back;
	// TargetDeletionSecret is the accept's (namespace/name), for the
	// target content.
	// +optional
	SourceDeletionSecret string `json:"sourceDeletionSecret,omitempty"`
	// +optional
	TargetDeletionSecret string `json:"targetDeletionSecret,omitempty"`

	// VolumeName is the PersistentVolume bound to the source claim.
	// +optional
	VolumeName string `json:"volumeName,omitempty"`
	// OriginalReclaimPolicy is the volume's reclaim policy before the
	// transfer set it to Retain.
	// +optional
	OriginalReclaimPolicy v1.PersistentVolumeReclaimPolicy `json:"originalReclaimPolicy,omitempty"`
	// ClaimSpec is the source claim's spec, from which the target claim
	// is created.
	// +optional
	ClaimSpec *v1.PersistentVolumeClaimSpec `json:"claimSpec,omitempty"`
}

// StorageTransferRequestList is a list of StorageTransferRequests.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type StorageTransferRequestList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the requests of the list.
	Items []StorageTransferRequest `json:"items"`
}

// StorageTransferAccept takes, into its namespace, the object that the
// StorageTransferRequest spec.requestName in spec.sourceNamespace offers,
// provided that request names this accept and spec.requestToken is its
// token.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,path=storagetransferaccepts,singular=storagetransferaccept,shortName=sta
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Source Namespace",type=string,JSONPath=`.spec.sourceNamespace`,description="Namespace of the request"
// +kubebuilder:printcolumn:name="Request",type=string,JSONPath=`.spec.requestName`,description="Name of the request"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type StorageTransferAccept struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the request and quotes its token. It cannot be changed
	// after creation.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: create another StorageTransferAccept"
	// +kubebuilder:validation:XValidation:rule="has(self.requestToken) != has(self.requestTokenSecretRef)",message="set exactly one of spec.requestToken and spec.requestTokenSecretRef"
	Spec StorageTransferAcceptSpec `json:"spec"`

	// Status mirrors the progress of the matched request.
	// +optional
	Status StorageTransferAcceptStatus `json:"status,omitempty"`
}

// StorageTransferAcceptSpec is the seed's accept.
type StorageTransferAcceptSpec struct {
	// SourceNamespace is the namespace of the request.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	SourceNamespace string `json:"sourceNamespace"`
	// RequestName is the name of the request.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	RequestName string `json:"requestName"`
	// RequestToken is the request's token (its spec.token, or the token
	// in its spec.tokenSecretRef).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	RequestToken string `json:"requestToken,omitempty"`
	// RequestTokenSecretRef, instead of spec.requestToken, names a Secret
	// of the accept's namespace that holds the request's token (see the
	// request's spec.tokenSecretRef). Until the transfer begins, deleting
	// the Secret or changing its token withdraws the accept, as deleting
	// the accept does; from then on the Secret is not read.
	// +optional
	RequestTokenSecretRef *TokenSecretReference `json:"requestTokenSecretRef,omitempty"`
	// DeletionSecretName is a Secret of the accept's namespace that the
	// transferred VolumeSnapshot's content names as its deletion secret
	// (the snapshot.storage.kubernetes.io/deletion-secret-* annotations):
	// needed when the backend needs a secret to delete the snapshot (the
	// source's content names one, or the request's spec.secrets has one
	// of type csi.storage.k8s.io/snapshotter-secret-name). The target
	// never depends on a secret of the source namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	DeletionSecretName string `json:"deletionSecretName,omitempty"`
	// Expect, when set, is what the accept agrees to take: a request that
	// offers anything else is not matched, and a source larger than
	// maxSize is not transferred. The accept's status.offered shows what
	// the matched request offers.
	// +optional
	Expect *TransferExpectation `json:"expect,omitempty"`
}

// TransferExpectation is what an accept agrees to take. Every field is
// optional: an empty one agrees to anything.
type TransferExpectation struct {
	// Kind is VolumeSnapshot or PersistentVolumeClaim.
	// +optional
	// +kubebuilder:validation:Enum=VolumeSnapshot;PersistentVolumeClaim
	Kind string `json:"kind,omitempty"`
	// TargetName is the name the object must get in the accept's
	// namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	TargetName string `json:"targetName,omitempty"`
	// MaxSize is the largest claim (its requested storage) or snapshot
	// (its restoreSize) the accept takes.
	// +optional
	MaxSize *resource.Quantity `json:"maxSize,omitempty"`
}

// TransferOffer is what a matched request offers, as the accept's owner
// sees it before the object arrives.
type TransferOffer struct {
	// Kind is VolumeSnapshot or PersistentVolumeClaim.
	Kind string `json:"kind"`
	// Source is the object offered, namespace/name.
	Source string `json:"source"`
	// TargetName is the name it gets in the accept's namespace.
	TargetName string `json:"targetName"`
	// Size is the claim's requested storage or the snapshot's
	// restoreSize, when known.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`
	// ClassName is the claim's StorageClass or the snapshot's
	// VolumeSnapshotClass.
	// +optional
	ClassName string `json:"className,omitempty"`
}

// StorageTransferAcceptStatus is the progress of the transfer as the
// target namespace sees it.
type StorageTransferAcceptStatus struct {
	// Offered is what the matched request offers.
	// +optional
	Offered *TransferOffer `json:"offered,omitempty"`
	// ObservedGeneration is the metadata.generation the status was
	// computed for.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase is where the transfer is.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// Conditions are the Matched and Transferred conditions.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// StorageTransferAcceptList is a list of StorageTransferAccepts.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type StorageTransferAcceptList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the accepts of the list.
	Items []StorageTransferAccept `json:"items"`
}
