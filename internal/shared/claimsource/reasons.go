package claimsource

// Reason is the cause of a verdict. Reasons are stable CamelCase words: the
// sidecar's event reasons and log codes, listed in docs/provisioner.md's event table.
// Every reason the decision can give is here.
type Reason string

// The claim-level reasons (Admit).
const (
	// ReasonAllowed: the claim may be provisioned from its source.
	ReasonAllowed Reason = "Allowed"
	// ReasonWaitingForPopulator: the source is a volume populator's kind
	// (KEP-1495); the claim is left to the populator.
	ReasonWaitingForPopulator Reason = "WaitingForPopulator"
	// ReasonDataSourceRefDropped: the API server dropped the claim's
	// spec.dataSourceRef (datasource.RefDropped); it is left alone rather
	// than given an empty volume.
	ReasonDataSourceRefDropped Reason = "DataSourceRefDropped"
	// ReasonCrossNamespaceDisabled: the claim names another namespace but
	// the CrossNamespaceSourceProvisioning feature gate is off.
	ReasonCrossNamespaceDisabled Reason = "CrossNamespaceSourceDisabled"
	// ReasonCrossNamespaceKindUnsupported: the claim names a
	// VolumeSnapshotLink in another namespace; a link must be in the
	// claim's own namespace (it is the link that names the other one).
	ReasonCrossNamespaceKindUnsupported Reason = "CrossNamespaceKindUnsupported"
	// ReasonGrantMissing: no ReferenceGrant in the source's namespace
	// allows the reference.
	ReasonGrantMissing Reason = "ReferenceGrantMissing"
	// ReasonGrantUnavailable: the ReferenceGrant cache cannot be read (API
	// not served, no permission, not synced); fail closed.
	ReasonGrantUnavailable Reason = "ReferenceGrantUnavailable"
	// ReasonLinkNotFound: the VolumeSnapshotLink the claim names does not
	// exist.
	ReasonLinkNotFound Reason = "VolumeSnapshotLinkNotFound"
	// ReasonLinkAPIUnavailable: the VolumeSnapshotLink cache cannot be read
	// (CRD not installed, no permission).
	ReasonLinkAPIUnavailable Reason = "VolumeSnapshotLinkAPIUnavailable"
)

// The source-level reasons (Decide): the driver's capabilities and the
// state of the snapshot or the claim to clone, in the order they are
// checked.
const (
	ReasonSnapshotRestoreUnsupported Reason = "SnapshotRestoreUnsupported"
	ReasonCloneUnsupported           Reason = "CloneUnsupported"
	ReasonSnapshotAPIUnavailable     Reason = "SnapshotAPIUnavailable"

	ReasonSnapshotNotFound        Reason = "SnapshotNotFound"
	ReasonSnapshotBeingDeleted    Reason = "SnapshotBeingDeleted"
	ReasonSnapshotNotBound        Reason = "SnapshotNotBound"
	ReasonSnapshotContentNotFound Reason = "SnapshotContentNotFound"
	ReasonSnapshotContentMismatch Reason = "SnapshotContentMismatch"
	ReasonSnapshotOfOtherDriver   Reason = "SnapshotOfOtherDriver"
	ReasonSnapshotNotReady        Reason = "SnapshotNotReady"
	ReasonSnapshotHandleMissing   Reason = "SnapshotHandleMissing"
	ReasonVolumeModeConversion    Reason = "VolumeModeConversionNotAllowed"

	ReasonSourceClaimUnreadable    Reason = "SourceClaimUnreadable"
	ReasonSourceClaimNotFound      Reason = "SourceClaimNotFound"
	ReasonSourceClaimBeingDeleted  Reason = "SourceClaimBeingDeleted"
	ReasonSourceClaimNotBound      Reason = "SourceClaimNotBound"
	ReasonSourceClaimOfOtherDriver Reason = "SourceClaimOfOtherDriver"
	ReasonStorageClassMismatch     Reason = "StorageClassMismatch"
	ReasonVolumeModeMismatch       Reason = "VolumeModeMismatch"
	// ReasonSourceVolumeMismatch: the PV the source claim names is bound
	// to another claim, or to an earlier claim of the source's name.
	ReasonSourceVolumeMismatch Reason = "SourceVolumeMismatch"

	// ReasonRequestedSizeTooSmall: the claim asks for less than the
	// snapshot's restore size or the source volume's capacity.
	ReasonRequestedSizeTooSmall Reason = "RequestedSizeTooSmall"
)

// The reasons of a VolumeSnapshotLink's conditions that are not refusals.
const (
	// ReasonSnapshotFound: the link's VolumeSnapshot exists (Resolved).
	ReasonSnapshotFound Reason = "SnapshotFound"
	// ReasonSameNamespace: the link's VolumeSnapshot is in the link's own
	// namespace and needs no grant (Allowed).
	ReasonSameNamespace Reason = "SameNamespace"
	// ReasonGranted: a ReferenceGrant allows the link (Allowed).
	ReasonGranted Reason = "Granted"
)
