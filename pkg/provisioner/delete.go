package provisioner

import (
	"context"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"

	"github.com/xns-csi/csi-provisioner/pkg/classparams"
)

// Delete deletes the volume behind a released PV. The controller library
// calls it only for PVs of this provisioner with reclaim policy Delete and
// removes the PV (and its finalizer) once it returns nil.
func (p *Provisioner) Delete(ctx context.Context, pv *v1.PersistentVolume) error {
	source := pv.Spec.CSI
	if source == nil || source.Driver != p.driverName {
		return &controller.IgnoredError{Reason: fmt.Sprintf("PV %s is not a volume of CSI driver %q", pv.Name, p.driverName)}
	}
	ref, err := p.deletionSecretRef(pv)
	if err != nil {
		return err
	}
	secret, err := p.readSecret(ctx, ref)
	if err != nil {
		return err
	}
	if err := p.driver.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: source.VolumeHandle, Secrets: secret}); err != nil {
		return fmt.Errorf("DeleteVolume %s: %w", source.VolumeHandle, err)
	}
	return nil
}

// deletionSecretRef finds the provisioner secret of a PV: from the
// annotations written at provisioning, or else from its StorageClass.
func (p *Provisioner) deletionSecretRef(pv *v1.PersistentVolume) (*v1.SecretReference, error) {
	if name, ok := pv.Annotations[annDeletionSecretName]; ok {
		return &v1.SecretReference{Name: name, Namespace: pv.Annotations[annDeletionSecretNamespace]}, nil
	}
	if p.classes == nil || pv.Spec.StorageClassName == "" {
		return nil, nil
	}
	class, err := p.classes.Get(pv.Spec.StorageClassName)
	if err != nil {
		return nil, nil // class gone: delete without secret, as upstream does
	}
	claim := classparams.Claim{PVName: pv.Name}
	if ref := pv.Spec.ClaimRef; ref != nil {
		claim.Namespace, claim.Name = ref.Namespace, ref.Name
	}
	return classparams.Resolve(classparams.ProvisionerSecret, class.Parameters, claim)
}
