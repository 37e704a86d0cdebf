package snapshotvalidation

import (
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	snapshotSource    = field.NewPath("spec", "source")
	snapshotClassName = field.NewPath("spec", "volumeSnapshotClassName")
)

// Snapshot validates a VolumeSnapshot admission request: obj is the object
// of a CREATE or UPDATE, old the stored object of an UPDATE (nil
// otherwise). Updates ratchet (see the package comment).
func Snapshot(op Operation, obj, old *snapv1.VolumeSnapshot) field.ErrorList {
	return ratchet(op, obj, old, StrictSnapshot, immutableSnapshot)
}

// StrictSnapshot is the seed's CREATE table for VolumeSnapshots: exactly
// one source, and a class name that is unset (the driver's default class)
// or non-empty.
func StrictSnapshot(snapshot *snapv1.VolumeSnapshot) field.ErrorList {
	source := snapshot.Spec.Source
	errs := exactlyOne(snapshotSource, [2]string{"persistentVolumeClaimName", "volumeSnapshotContentName"},
		[2]*string{source.PersistentVolumeClaimName, source.VolumeSnapshotContentName})
	if name := snapshot.Spec.VolumeSnapshotClassName; name != nil && *name == "" {
		errs = append(errs, field.Invalid(snapshotClassName, *name, "must not be the empty string: leave it unset to use the driver's default class"))
	}
	return errs
}

// immutableSnapshot is the seed's UPDATE table for VolumeSnapshots:
// spec.source never changes (a wrong source means deleting and creating
// the snapshot again).
func immutableSnapshot(snapshot, old *snapv1.VolumeSnapshot) field.ErrorList {
	source, oldSource := snapshot.Spec.Source, old.Spec.Source
	errs := immutableString(snapshotSource.Child("persistentVolumeClaimName"), source.PersistentVolumeClaimName, oldSource.PersistentVolumeClaimName)
	return append(errs, immutableString(snapshotSource.Child("volumeSnapshotContentName"), source.VolumeSnapshotContentName, oldSource.VolumeSnapshotContentName)...)
}
