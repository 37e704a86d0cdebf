// Package clonesource decides whether a PersistentVolumeClaim can be cloned
// into a new volume right now. Like snapshotsource, it is pure: the caller
// gathers the source claim and its volume from informer caches.
package clonesource

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/xns-csi/csi-provisioner/pkg/datasource"
)

// Reason says why a claim cannot be cloned (yet).
type Reason string

// The reasons Check can return.
const (
	Usable            Reason = "Usable"
	NotFound          Reason = "SourceClaimNotFound"
	BeingDeleted      Reason = "SourceClaimBeingDeleted"
	NotBound          Reason = "SourceClaimNotBound"
	OtherDriver       Reason = "SourceClaimOfOtherDriver"
	ClassMismatch     Reason = "StorageClassMismatch"
	VolumeModeChanged Reason = "VolumeModeMismatch"
	TooSmall          Reason = "RequestedSizeTooSmall"
)

// Input is everything Check looks at.
type Input struct {
	// Namespace and Name identify the source claim.
	Namespace, Name string
	// Source is the source claim from the cache, nil if absent.
	Source *v1.PersistentVolumeClaim
	// Volume is the PV the source claim is bound to, nil if absent.
	Volume *v1.PersistentVolume
	// Claim is the claim being provisioned.
	Claim *v1.PersistentVolumeClaim
	// ClassName is the storage class of the claim being provisioned.
	ClassName string
	// DriverName is the CSI driver this sidecar serves.
	DriverName string
	// RequestedBytes is the new claim's storage request.
	RequestedBytes int64
}

// Verdict is the outcome of Check.
type Verdict struct {
	// Reason is Usable when the source can be cloned.
	Reason Reason
	// Message tells the claim's owner what is wrong and what to do.
	Message string
	// Handle is the CSI volume ID to clone, when usable.
	Handle string
	// SourceBytes is the capacity of the source volume.
	SourceBytes int64
}

// Usable reports whether the source can be cloned now.
func (v Verdict) Usable() bool { return v.Reason == Usable }

// Check decides whether the source claim in the input can be cloned.
func Check(in Input) Verdict {
	ref := fmt.Sprintf("PersistentVolumeClaim %s/%s", in.Namespace, in.Name)
	src, pv := in.Source, in.Volume
	switch {
	case src == nil:
		return refuse(NotFound, "source %s does not exist", ref)
	case !datasource.ServesDespiteDeletion(src, datasource.CloneFinalizer, in.Claim):
		return refuse(BeingDeleted, "source %s is being deleted and cannot be cloned", ref)
	case src.Spec.VolumeName == "" || src.Status.Phase != v1.ClaimBound || pv == nil:
		return refuse(NotBound, "source %s is not bound yet; the clone is provisioned once it is", ref)
	case pv.Spec.CSI == nil || pv.Spec.CSI.Driver != in.DriverName:
		return refuse(OtherDriver, "source %s is not a volume of CSI driver %q and cannot be cloned by it", ref, in.DriverName)
	case className(src) != in.ClassName:
		return refuse(ClassMismatch, "source %s has StorageClass %q; a clone must use the same class, not %q", ref, className(src), in.ClassName)
	case modeOf(src.Spec.VolumeMode) != modeOf(in.Claim.Spec.VolumeMode):
		return refuse(VolumeModeChanged, "source %s has volume mode %s; a clone must use the same mode, not %s",
			ref, modeOf(src.Spec.VolumeMode), modeOf(in.Claim.Spec.VolumeMode))
	}
	size := pv.Spec.Capacity[v1.ResourceStorage]
	if in.RequestedBytes < size.Value() {
		return refuse(TooSmall, "requested volume size %d is smaller than the size %d of source %s; request at least that",
			in.RequestedBytes, size.Value(), ref)
	}
	return Verdict{Reason: Usable, Handle: pv.Spec.CSI.VolumeHandle, SourceBytes: size.Value()}
}

func refuse(reason Reason, format string, args ...any) Verdict {
	return Verdict{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

func className(c *v1.PersistentVolumeClaim) string {
	if c.Spec.StorageClassName == nil {
		return ""
	}
	return *c.Spec.StorageClassName
}

func modeOf(m *v1.PersistentVolumeMode) v1.PersistentVolumeMode {
	if m == nil {
		return v1.PersistentVolumeFilesystem
	}
	return *m
}
