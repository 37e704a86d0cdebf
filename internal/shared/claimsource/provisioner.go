package claimsource

import v1 "k8s.io/api/core/v1"

// Annotations with which the PV controller hands a claim to the
// provisioner of its StorageClass.
const (
	AnnStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	AnnBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
)

// ProvisionerOf is the provisioner the claim was handed to: the GA
// annotation's, else the beta one's; "" before the PV controller chose one.
// Whose claim it is decides whose settings judge it (package sourceuse).
func ProvisionerOf(claim *v1.PersistentVolumeClaim) string {
	if name, ok := claim.Annotations[AnnStorageProvisioner]; ok {
		return name
	}
	return claim.Annotations[AnnBetaStorageProvisioner]
}
