package provisioner

import (
	"context"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"

	"github.com/xns-csi/csi-provisioner/internal/sidecar/classparams"
	csiclient "github.com/xns-csi/csi-provisioner/internal/sidecar/csi"
)

// Delete deletes the volume behind a released PV. The controller library
// calls it only for PVs of this provisioner with reclaim policy Delete
// (provisioned by this driver or by the in-tree plugin it replaces, or
// migrated to it) and removes the PV (and its finalizer) once it returns
// nil. The volume of an in-tree PV is found in its CSI translation.
func (p *Provisioner) Delete(ctx context.Context, pv *v1.PersistentVolume) error {
	pv, migrated, err := p.migration.volumeToCSI(ctx, pv)
	if err != nil {
		return err
	}
	source := pv.Spec.CSI
	if source == nil || source.Driver != p.driverName {
		return &controller.IgnoredError{Reason: fmt.Sprintf("PV %s is not a volume of CSI driver %q", pv.Name, p.driverName)}
	}
	secret, err := p.deletionSecret(ctx, pv, migrated)
	if err != nil {
		return err
	}
	if err := p.checkDetached(pv); err != nil {
		return err
	}
	ctx = csiclient.WithMigrated(ctx, migrated)
	if err := p.driver.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: source.VolumeHandle, Secrets: secret}); err != nil {
		return fmt.Errorf("DeleteVolume %s: %w", source.VolumeHandle, err)
	}
	return nil
}

// deletionSecret returns the data of the PV's provisioner secret, nil when
// it has none. As upstream, a secret that cannot be read (it may have been
// deleted before the volume) does not stop the deletion: the driver is
// asked without it.
func (p *Provisioner) deletionSecret(ctx context.Context, pv *v1.PersistentVolume, migrated bool) (map[string]string, error) {
	ref, err := p.deletionSecretRef(ctx, pv, migrated)
	if err != nil || ref == nil {
		return nil, err
	}
	secret, err := p.readSecret(ctx, ref)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Deleting the volume without its provisioner secret", "pv", klog.KObj(pv))
		return nil, nil
	}
	return secret, nil
}

// deletionSecretRef finds the provisioner secret of a PV, as upstream: from
// the annotations written at provisioning when both are there (both empty:
// the volume needs no secret), or else from its StorageClass, if it still
// exists, in CSI terms for a migrated PV of an in-tree class.
func (p *Provisioner) deletionSecretRef(ctx context.Context, pv *v1.PersistentVolume, migrated bool) (*v1.SecretReference, error) {
	name, hasName := pv.Annotations[annDeletionSecretName]
	namespace, hasNamespace := pv.Annotations[annDeletionSecretNamespace]
	if hasName && hasNamespace {
		if name == "" || namespace == "" {
			return nil, nil
		}
		return &v1.SecretReference{Name: name, Namespace: namespace}, nil
	}
	if p.classes == nil || pv.Spec.StorageClassName == "" || pv.Spec.ClaimRef == nil {
		return nil, nil
	}
	class, err := p.classes.Get(pv.Spec.StorageClassName)
	if err != nil {
		return nil, nil // class gone: delete without secret, as upstream does
	}
	if migrated {
		if class, err = p.migration.classToCSI(ctx, class); err != nil {
			return nil, err
		}
	}
	claim := classparams.Claim{PVName: pv.Name, Namespace: pv.Spec.ClaimRef.Namespace, Name: pv.Spec.ClaimRef.Name}
	ref, err := classparams.Resolve(classparams.ProvisionerSecret, class.Parameters, claim)
	if err != nil {
		return nil, fmt.Errorf("failed to get secretreference for volume %s: %w", pv.Name, err)
	}
	return ref, nil
}
