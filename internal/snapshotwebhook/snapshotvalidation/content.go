package snapshotvalidation

import (
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	contentSource     = field.NewPath("spec", "source")
	contentRef        = field.NewPath("spec", "volumeSnapshotRef")
	contentVolumeMode = field.NewPath("spec", "sourceVolumeMode")
)

// ContentOptions are the webhook's settings that change the
// VolumeSnapshotContent rules.
type ContentOptions struct {
	// PreventVolumeModeConversion is --prevent-volume-mode-conversion:
	// spec.sourceVolumeMode is immutable, so that nobody can relabel a
	// Block snapshot as Filesystem (or back) to get around the
	// provisioner's volume-mode check.
	PreventVolumeModeConversion bool
}

// Content validates a VolumeSnapshotContent admission request: obj is the
// object of a CREATE or UPDATE, old the stored object of an UPDATE (nil
// otherwise). Updates ratchet (see the package comment).
func Content(op Operation, obj, old *snapv1.VolumeSnapshotContent, opts ContentOptions) field.ErrorList {
	immutable := func(obj, old *snapv1.VolumeSnapshotContent) field.ErrorList { return immutableContent(obj, old, opts) }
	return ratchet(op, obj, old, StrictContent, immutable)
}

// StrictContent is the seed's CREATE table for VolumeSnapshotContents:
// exactly one of a volume handle (a dynamic snapshot) and a snapshot handle
// (a pre-provisioned one), and a reference naming the VolumeSnapshot it
// binds to.
func StrictContent(content *snapv1.VolumeSnapshotContent) field.ErrorList {
	source := content.Spec.Source
	errs := exactlyOne(contentSource, [2]string{"volumeHandle", "snapshotHandle"},
		[2]*string{source.VolumeHandle, source.SnapshotHandle})
	ref := content.Spec.VolumeSnapshotRef
	if ref.Name == "" {
		errs = append(errs, field.Required(contentRef.Child("name"), "the VolumeSnapshot this content binds to must be named"))
	}
	if ref.Namespace == "" {
		errs = append(errs, field.Required(contentRef.Child("namespace"), "the namespace of the VolumeSnapshot this content binds to must be set"))
	}
	return errs
}

// immutableContent is the seed's UPDATE table for VolumeSnapshotContents:
// spec.source never changes; spec.volumeSnapshotRef does not once the
// snapshot-controller has bound it (its uid is set); spec.sourceVolumeMode
// does not with PreventVolumeModeConversion.
func immutableContent(content, old *snapv1.VolumeSnapshotContent, opts ContentOptions) field.ErrorList {
	source, oldSource := content.Spec.Source, old.Spec.Source
	errs := immutableString(contentSource.Child("volumeHandle"), source.VolumeHandle, oldSource.VolumeHandle)
	errs = append(errs, immutableString(contentSource.Child("snapshotHandle"), source.SnapshotHandle, oldSource.SnapshotHandle)...)
	if oldRef := old.Spec.VolumeSnapshotRef; oldRef.UID != "" && content.Spec.VolumeSnapshotRef != oldRef {
		errs = append(errs, field.Invalid(contentRef, content.Spec.VolumeSnapshotRef,
			"field is immutable once bound (uid "+string(oldRef.UID)+" of "+oldRef.Namespace+"/"+oldRef.Name+")"))
	}
	if opts.PreventVolumeModeConversion && !equalPtr(content.Spec.SourceVolumeMode, old.Spec.SourceVolumeMode) {
		errs = append(errs, field.Invalid(contentVolumeMode, content.Spec.SourceVolumeMode,
			"field is immutable with --prevent-volume-mode-conversion (was "+display(old.Spec.SourceVolumeMode)+")"))
	}
	return errs
}
