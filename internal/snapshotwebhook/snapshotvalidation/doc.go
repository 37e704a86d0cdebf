// Package snapshotvalidation holds the rules of the snapshot validation
// webhook (seed 004, KEP-1900) as pure functions: each takes the object of
// an admission request (and the old object of an update, or the other
// classes for the default-class rule) and returns a field.ErrorList, empty
// when the request is allowed. No I/O: the webhook decodes the request and
// gathers the classes from an informer cache, then asks this package.
//
// The rules are the seed's two tables ("Validating Scenarios"):
//
//	VolumeSnapshot         CREATE  exactly one of spec.source.persistentVolumeClaimName
//	                               and spec.source.volumeSnapshotContentName
//	                               spec.volumeSnapshotClassName unset or non-empty
//	                       UPDATE  spec.source immutable; class name as on CREATE
//	VolumeSnapshotContent  CREATE  exactly one of spec.source.volumeHandle and
//	                               spec.source.snapshotHandle
//	                               spec.volumeSnapshotRef.name and .namespace set
//	                       UPDATE  spec.source immutable; spec.volumeSnapshotRef
//	                               immutable once its uid is set; spec.sourceVolumeMode
//	                               immutable with --prevent-volume-mode-conversion
//
// plus the one rule CRD CEL rules cannot state, because it needs the other
// objects: at most one default VolumeSnapshotClass (and
// VolumeGroupSnapshotClass) per driver.
//
// Updates ratchet, as the seed's "Backwards compatibility" requires: the
// CREATE rules hold for the new object of an update only when the old object
// passes them, so that objects persisted before the webhook existed can still
// lose their finalizers, change status and labels, and be deleted. The
// immutability rules hold on every update: a no-op update (the one the seed
// says must never be prevented) cannot break them, and relaxing them for
// invalid objects would let a bound content be pointed at another backend
// snapshot, the very thing they guard against. DELETE and CONNECT are always
// allowed.
package snapshotvalidation
