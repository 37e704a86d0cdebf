package claimsource

import (
	"github.com/container-storage-interface/spec/lib/go/csi"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// checkSnapshot decides whether the snapshot can be restored now. It
// replaces the upstream provisioner's getSnapshotSource, which interleaved
// live GETs with these checks.
func checkSnapshot(in Input, src datasource.Source) Verdict {
	ref := src.String()
	snap, content := in.Snapshot, in.Content
	switch {
	case in.Unreadable != nil:
		return refuse(ReasonSnapshotAPIUnavailable, "cannot read %s: %v", ref, in.Unreadable)
	case snap == nil:
		return refuse(ReasonSnapshotNotFound, "%s does not exist; create it or fix the claim's data source", ref)
	case !datasource.ServesUseDespiteDeletion(snap, src.Finalizer(), in.Order, UseObjects(in.Claim, linkOf(in, src))...):
		return refuse(ReasonSnapshotBeingDeleted, "%s is being deleted and cannot be restored", ref)
	case snap.Status == nil || snap.Status.BoundVolumeSnapshotContentName == nil || *snap.Status.BoundVolumeSnapshotContentName == "":
		return refuse(ReasonSnapshotNotBound, "%s is not bound to a VolumeSnapshotContent yet; waiting for the snapshot controller", ref)
	}
	contentName := *snap.Status.BoundVolumeSnapshotContentName
	switch {
	case content == nil:
		return refuse(ReasonSnapshotContentNotFound, "VolumeSnapshotContent %q of %s does not exist", contentName, ref)
	case content.Spec.VolumeSnapshotRef.Name != snap.Name || content.Spec.VolumeSnapshotRef.Namespace != snap.Namespace ||
		(content.Spec.VolumeSnapshotRef.UID != "" && content.Spec.VolumeSnapshotRef.UID != snap.UID):
		return refuse(ReasonSnapshotContentMismatch, "VolumeSnapshotContent %q is bound to VolumeSnapshot %s/%s, not to %s",
			contentName, content.Spec.VolumeSnapshotRef.Namespace, content.Spec.VolumeSnapshotRef.Name, ref)
	case content.Spec.Driver != in.Driver.Name:
		return refuse(ReasonSnapshotOfOtherDriver, "%s was taken by CSI driver %q; this provisioner serves %q, use a StorageClass of that driver",
			ref, content.Spec.Driver, in.Driver.Name)
	case snap.Status.ReadyToUse == nil || !*snap.Status.ReadyToUse:
		return refuse(ReasonSnapshotNotReady, "%s is not ready to use yet; the claim is provisioned once it is", ref)
	case content.Status == nil || content.Status.SnapshotHandle == nil || *content.Status.SnapshotHandle == "":
		return refuse(ReasonSnapshotHandleMissing, "VolumeSnapshotContent %q of %s has no snapshot handle yet", contentName, ref)
	}
	if restore := restoreBytes(snap, content); restore > 0 && RequestedBytes(in.Claim) < restore {
		return refuse(ReasonRequestedSizeTooSmall, "requested volume size %d is smaller than the restore size %d of %s; request at least %d bytes",
			RequestedBytes(in.Claim), restore, ref, restore)
	}
	if in.Driver.PreventVolumeModeConversion && !modeChangeAllowed(content) {
		want, have := modeOf(in.Claim.Spec.VolumeMode), modeOf(content.Spec.SourceVolumeMode)
		if content.Spec.SourceVolumeMode != nil && want != have {
			return refuse(ReasonVolumeModeConversion, "%s was taken from a %s volume and cannot be restored as %s unless its VolumeSnapshotContent %q is annotated %s: \"true\"",
				ref, have, want, contentName, datasource.AllowVolumeModeChangeAnnotations[0])
		}
	}
	v := allowed(src, "")
	v.Content = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
		Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: *content.Status.SnapshotHandle}}}
	return v
}

// UseObjects are the objects that together make a claim's use of its
// source, for datasource.ServesUseDespiteDeletion: the claim and, when it
// restores through one, the VolumeSnapshotLink (nil otherwise). A source
// being deleted serves the use only if every one of them was there
// first. Provisioning and package sourceuse ask it alike, so that a claim
// refused holds nothing.
func UseObjects(claim *v1.PersistentVolumeClaim, link *snapv1alpha1.VolumeSnapshotLink) []metav1.Object {
	if link == nil {
		return []metav1.Object{claim}
	}
	return []metav1.Object{claim, link}
}

// linkOf is the link the claim restores src through, nil when it names
// src directly.
func linkOf(in Input, src datasource.Source) *snapv1alpha1.VolumeSnapshotLink {
	if !src.ThroughLink {
		return nil
	}
	return in.Link
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
	for _, a := range datasource.AllowVolumeModeChangeAnnotations {
		if content.Annotations[a] == "true" {
			return true
		}
	}
	return false
}
