package claimsource

import (
	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// checkClone decides whether the source claim can be cloned now.
func checkClone(in Input) Verdict {
	ref := "PersistentVolumeClaim " + in.Source.Namespace + "/" + in.Source.Name
	src, pv := in.SourceClaim, in.SourceVolume
	switch {
	case in.Unreadable != nil:
		return refuse(ReasonSourceClaimUnreadable, "cannot read source %s: %v", ref, in.Unreadable)
	case src == nil:
		return refuse(ReasonSourceClaimNotFound, "source %s does not exist", ref)
	case !datasource.ServesDespiteDeletion(src, in.Source.Finalizer(), in.Claim, in.Order):
		return refuse(ReasonSourceClaimBeingDeleted, "source %s is being deleted and cannot be cloned", ref)
	case src.Spec.VolumeName == "" || src.Status.Phase != v1.ClaimBound || pv == nil:
		return refuse(ReasonSourceClaimNotBound, "source %s is not bound yet; the clone is provisioned once it is", ref)
	}
	if v, ok := checkVolumeBinding(ref, src, pv); !ok {
		return v
	}
	switch {
	case pv.Spec.CSI == nil || pv.Spec.CSI.Driver != in.Driver.Name:
		return refuse(ReasonSourceClaimOfOtherDriver, "source %s is not a volume of CSI driver %q and cannot be cloned by it", ref, in.Driver.Name)
	case className(src) != in.ClassName:
		return refuse(ReasonStorageClassMismatch, "source %s has StorageClass %q; a clone must use the same class, not %q", ref, className(src), in.ClassName)
	case modeOf(src.Spec.VolumeMode) != modeOf(in.Claim.Spec.VolumeMode):
		return refuse(ReasonVolumeModeMismatch, "source %s has volume mode %s; a clone must use the same mode, not %s",
			ref, modeOf(src.Spec.VolumeMode), modeOf(in.Claim.Spec.VolumeMode))
	}
	size := pv.Spec.Capacity[v1.ResourceStorage]
	if RequestedBytes(in.Claim) < size.Value() {
		return refuse(ReasonRequestedSizeTooSmall, "requested volume size %d is smaller than the size %d of source %s; request at least that",
			RequestedBytes(in.Claim), size.Value(), ref)
	}
	v := allowed(in.Source, "")
	v.Content = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{
		Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: pv.Spec.CSI.VolumeHandle}}}
	return v
}

// checkVolumeBinding refuses a source volume that is not bound to the
// source claim itself, as the upstream provisioner's getPVCSource does: its
// claimRef must name the claim's namespace, name and UID, and its phase be
// Bound. A volume bound to no claim yet, or not Bound yet, is the PV cache
// behind the claim cache, and the clone waits for the PV's update (package
// requeue re-queues it then); a volume bound to another claim, or to an
// earlier claim of the source's name, is refused: its data is not the
// source's.
func checkVolumeBinding(ref string, src *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) (Verdict, bool) {
	claimRef := pv.Spec.ClaimRef
	sameName := claimRef != nil && claimRef.Namespace == src.Namespace && claimRef.Name == src.Name
	switch {
	case claimRef == nil || sameName && claimRef.UID == "":
		return refuse(ReasonSourceClaimNotBound, "source %s is not bound yet: its PersistentVolume %q is not bound to it yet; the clone is provisioned once it is",
			ref, pv.Name), false
	case !sameName:
		return refuse(ReasonSourceVolumeMismatch, "PersistentVolume %q of source %s is bound to PersistentVolumeClaim %s/%s; it cannot be cloned",
			pv.Name, ref, claimRef.Namespace, claimRef.Name), false
	case claimRef.UID != src.UID:
		return refuse(ReasonSourceVolumeMismatch, "PersistentVolume %q of source %s is bound to an earlier claim of that name (UID %s, not %s); it cannot be cloned",
			pv.Name, ref, claimRef.UID, src.UID), false
	case pv.Status.Phase != v1.VolumeBound:
		return refuse(ReasonSourceClaimNotBound, "source %s is not bound yet: its PersistentVolume %q has phase %q; the clone is provisioned once it is Bound",
			ref, pv.Name, pv.Status.Phase), false
	}
	return Verdict{}, true
}

func className(c *v1.PersistentVolumeClaim) string {
	if c.Spec.StorageClassName == nil {
		return ""
	}
	return *c.Spec.StorageClassName
}
