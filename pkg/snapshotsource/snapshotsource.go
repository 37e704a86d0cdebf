// Package snapshotsource decides whether a VolumeSnapshot can be restored
// into a new volume right now.
//
// The caller gathers the snapshot and its content from informer caches;
// Check only looks at values and returns a verdict whose message tells the
// claim's owner what to do. It replaces the upstream provisioner's
// getSnapshotSource, which interleaved live GETs with these checks.
package snapshotsource

import (
	"fmt"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/pkg/datasource"
)

// AllowVolumeModeChangeAnnotations mark a VolumeSnapshotContent whose
// snapshot may be restored with another volume mode than its source had.
// The first is the external-snapshotter's spelling, the second the one this
// project's issues use; either set to "true" allows the change.
var AllowVolumeModeChangeAnnotations = []string{
	"snapshot.storage.kubernetes.io/allow-volume-mode-change",
	"snapshot.storage.k8s.io/allow-volume-mode-change",
}

// Reason says why a snapshot cannot be used (yet). Reasons are stable and
// short; they appear in logs and tests, the Message goes to the user.
type Reason string

// The reasons Check can return, in the order it checks them.
const (
	Usable               Reason = "Usable"
	NotFound             Reason = "SnapshotNotFound"
	BeingDeleted         Reason = "SnapshotBeingDeleted"
	NotBound             Reason = "SnapshotNotBound"
	ContentNotFound      Reason = "SnapshotContentNotFound"
	ContentMismatch      Reason = "SnapshotContentMismatch"
	OtherDriver          Reason = "SnapshotOfOtherDriver"
	NotReady             Reason = "SnapshotNotReady"
	NoHandle             Reason = "SnapshotHandleMissing"
	TooSmall             Reason = "RequestedSizeTooSmall"
	VolumeModeConversion Reason = "VolumeModeConversionNotAllowed"
)

// Input is everything Check looks at.
type Input struct {
	// Namespace and Name identify the requested snapshot.
	Namespace, Name string
	// Snapshot is the VolumeSnapshot from the cache, nil if absent.
	Snapshot *snapv1.VolumeSnapshot
	// Content is the VolumeSnapshotContent the snapshot is bound to, nil if
	// absent or not looked up.
	Content *snapv1.VolumeSnapshotContent
	// Claim is the claim being provisioned: a snapshot being deleted still
	// serves the claims that existed when its deletion was requested (see
	// datasource.ServesDespiteDeletion).
	Claim metav1.Object
	// DriverName is the CSI driver this sidecar serves.
	DriverName string
	// RequestedBytes is the claim's storage request.
	RequestedBytes int64
	// VolumeMode is the claim's volume mode (nil means Filesystem).
	VolumeMode *v1.PersistentVolumeMode
	// PreventVolumeModeConversion refuses a volume mode change unless the
	// content allows it (--prevent-volume-mode-conversion).
	PreventVolumeModeConversion bool
}

// Verdict is the outcome of Check.
type Verdict struct {
	// Reason is Usable when the snapshot can be restored.
	Reason Reason
	// Message tells the claim's owner what is wrong and what to do.
	Message string
	// Handle is the CSI snapshot ID to restore from, when usable.
	Handle string
	// RestoreBytes is the snapshot's minimum volume size, 0 when unknown.
	RestoreBytes int64
}

// Usable reports whether the snapshot can be restored now.
func (v Verdict) Usable() bool { return v.Reason == Usable }

// Check decides whether the snapshot in the input can be restored.
func Check(in Input) Verdict {
	ref := fmt.Sprintf("VolumeSnapshot %s/%s", in.Namespace, in.Name)
	snap, content := in.Snapshot, in.Content
	switch {
	case snap == nil:
		return refuse(NotFound, "%s does not exist; create it or fix the claim's data source", ref)
	case !datasource.ServesDespiteDeletion(snap, datasource.SnapshotFinalizer, in.Claim):
		return refuse(BeingDeleted, "%s is being deleted and cannot be restored", ref)
	case snap.Status == nil || snap.Status.BoundVolumeSnapshotContentName == nil || *snap.Status.BoundVolumeSnapshotContentName == "":
		return refuse(NotBound, "%s is not bound to a VolumeSnapshotContent yet; waiting for the snapshot controller", ref)
	}
	contentName := *snap.Status.BoundVolumeSnapshotContentName
	switch {
	case content == nil:
		return refuse(ContentNotFound, "VolumeSnapshotContent %q of %s does not exist", contentName, ref)
	case content.Spec.VolumeSnapshotRef.Name != snap.Name || content.Spec.VolumeSnapshotRef.Namespace != snap.Namespace ||
		(content.Spec.VolumeSnapshotRef.UID != "" && content.Spec.VolumeSnapshotRef.UID != snap.UID):
		return refuse(ContentMismatch, "VolumeSnapshotContent %q is bound to VolumeSnapshot %s/%s, not to %s",
			contentName, content.Spec.VolumeSnapshotRef.Namespace, content.Spec.VolumeSnapshotRef.Name, ref)
	case content.Spec.Driver != in.DriverName:
		return refuse(OtherDriver, "%s was taken by CSI driver %q; this provisioner serves %q, use a StorageClass of that driver",
			ref, content.Spec.Driver, in.DriverName)
	case snap.Status.ReadyToUse == nil || !*snap.Status.ReadyToUse:
		return refuse(NotReady, "%s is not ready to use yet; the claim is provisioned once it is", ref)
	case content.Status == nil || content.Status.SnapshotHandle == nil || *content.Status.SnapshotHandle == "":
		return refuse(NoHandle, "VolumeSnapshotContent %q of %s has no snapshot handle yet", contentName, ref)
	}
	restore := restoreBytes(snap, content)
	if restore > 0 && in.RequestedBytes < restore {
		return refuse(TooSmall, "requested volume size %d is smaller than the restore size %d of %s; request at least %d bytes",
			in.RequestedBytes, restore, ref, restore)
	}
	if in.PreventVolumeModeConversion && !modeChangeAllowed(content) {
		want, have := modeOf(in.VolumeMode), modeOf(content.Spec.SourceVolumeMode)
		if content.Spec.SourceVolumeMode != nil && want != have {
			return refuse(VolumeModeConversion, "%s was taken from a %s volume and cannot be restored as %s unless its VolumeSnapshotContent %q is annotated %s: \"true\"",
				ref, have, want, contentName, AllowVolumeModeChangeAnnotations[0])
		}
	}
	return Verdict{Reason: Usable, Handle: *content.Status.SnapshotHandle, RestoreBytes: restore}
}

func refuse(reason Reason, format string, args ...any) Verdict {
	return Verdict{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// restoreBytes prefers the snapshot's status (what users see) and falls back
// to the content's.
func restoreBytes(snap *snapv1.VolumeSnapshot, content *snapv1.VolumeSnapshotContent) int64 {
	if snap.Status.RestoreSize != nil {
		return snap.Status.RestoreSize.Value()
	}
	if content.Status.RestoreSize != nil {
		return *content.Status.RestoreSize
	}
	return 0
}

func modeChangeAllowed(content *snapv1.VolumeSnapshotContent) bool {
	for _, a := range AllowVolumeModeChangeAnnotations {
		if content.Annotations[a] == "true" {
			return true
		}
	}
	return false
}

func modeOf(m *v1.PersistentVolumeMode) v1.PersistentVolumeMode {
	if m == nil {
		return v1.PersistentVolumeFilesystem
	}
	return *m
}
