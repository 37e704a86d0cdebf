package provisioner

import (
	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/classparams"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/topology"
)

// Annotations that keep the provisioner secret of a PV, so DeleteVolume gets
// it even after the StorageClass is gone, and the controller-modify secret
// for the external-resizer's ControllerModifyVolume (same keys as upstream).
const (
	annDeletionSecretName      = "volume.kubernetes.io/provisioner-deletion-secret-name"
	annDeletionSecretNamespace = "volume.kubernetes.io/provisioner-deletion-secret-namespace"
	annModifySecretName        = "volume.kubernetes.io/controller-modify-secret-name"
	annModifySecretNamespace   = "volume.kubernetes.io/controller-modify-secret-namespace"
)

// volumeInput is what buildVolume needs.
type volumeInput struct {
	opts       Options
	claim      *v1.PersistentVolumeClaim
	class      *storagev1.StorageClass
	pvName     string
	driverName string
	identity   string // the provisioner's, see Identity
	// topology: the driver is topology-aware, so its accessible topology
	// becomes the PV's node affinity (upstream ignores it otherwise).
	topology bool
	fsType   string
	// attributesClass is the claim's VolumeAttributesClass when the
	// feature applies to it.
	attributesClass string
	created         *csi.Volume
	secrets         classparams.SecretRefs
}

// buildVolume returns the PV for a volume the driver created. The
// controller library adds the claim reference, class and provisioned-by
// annotation.
func buildVolume(in volumeInput) *v1.PersistentVolume {
	capacity := in.created.GetCapacityBytes()
	if capacity == 0 {
		capacity = claimsource.RequestedBytes(in.claim)
	}
	reclaim := v1.PersistentVolumeReclaimDelete
	if in.class.ReclaimPolicy != nil {
		reclaim = *in.class.ReclaimPolicy
	}
	source := &v1.CSIPersistentVolumeSource{
		Driver:                     in.driverName,
		VolumeHandle:               in.created.GetVolumeId(),
		VolumeAttributes:           volumeAttributes(in.identity, in.created.GetVolumeContext()),
		ReadOnly:                   in.opts.ControllerPublishReadOnly && readOnlyMany(in.claim.Spec.AccessModes),
		ControllerPublishSecretRef: in.secrets[classparams.ControllerPublishSecret],
		NodeStageSecretRef:         in.secrets[classparams.NodeStageSecret],
		NodePublishSecretRef:       in.secrets[classparams.NodePublishSecret],
		ControllerExpandSecretRef:  in.secrets[classparams.ControllerExpandSecret],
		NodeExpandSecretRef:        in.secrets[classparams.NodeExpandSecret],
	}
	if in.claim.Spec.VolumeMode == nil || *in.claim.Spec.VolumeMode != v1.PersistentVolumeBlock {
		source.FSType = in.fsType
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: in.pvName},
		Spec: v1.PersistentVolumeSpec{
			AccessModes:                   in.claim.Spec.AccessModes,
			Capacity:                      v1.ResourceList{v1.ResourceStorage: *resource.NewQuantity(capacity, resource.BinarySI)},
			PersistentVolumeReclaimPolicy: reclaim,
			MountOptions:                  in.class.MountOptions,
			VolumeMode:                    in.claim.Spec.VolumeMode,
			PersistentVolumeSource:        v1.PersistentVolumeSource{CSI: source},
		},
	}
	if in.attributesClass != "" {
		pv.Spec.VolumeAttributesClassName = &in.attributesClass
	}
	if in.topology {
		pv.Spec.NodeAffinity = topology.NodeAffinity(in.created.GetAccessibleTopology())
	}
	pv.Annotations = secretAnnotations(in.secrets)
	return pv
}

// secretAnnotations keeps the provisioner secret for DeleteVolume, empty
// when there is none (as upstream: DeleteVolume then needs no secret, even
// if the StorageClass later names one), and the controller-modify secret
// when there is one.
func secretAnnotations(refs classparams.SecretRefs) map[string]string {
	ann := map[string]string{annDeletionSecretName: "", annDeletionSecretNamespace: ""}
	if ref := refs[classparams.ProvisionerSecret]; ref != nil {
		ann[annDeletionSecretName], ann[annDeletionSecretNamespace] = ref.Name, ref.Namespace
	}
	if ref := refs[classparams.ControllerModifySecret]; ref != nil {
		ann[annModifySecretName], ann[annModifySecretNamespace] = ref.Name, ref.Namespace
	}
	return ann
}

// readOnlyMany reports whether the only access mode is ReadOnlyMany.
func readOnlyMany(modes []v1.PersistentVolumeAccessMode) bool {
	return len(modes) == 1 && modes[0] == v1.ReadOnlyMany
}
