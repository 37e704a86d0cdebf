package provisioner

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// Attachments reads the VolumeAttachments of a PV from a cache. The error
// says why the cache cannot be read yet (e.g. no RBAC to list them).
type Attachments interface {
	OfVolume(pv string) ([]*storagev1.VolumeAttachment, error)
}

// checkDetached refuses, as upstream does, to delete a volume that a
// VolumeAttachment still attaches to a node: DeleteVolume of an attached
// volume fails or, with some drivers, destroys data in use. The error makes
// the library retry the deletion until the attachment is gone. Without an
// attachment cache (a driver without PUBLISH_UNPUBLISH_VOLUME) there is
// nothing to check.
func (p *Provisioner) checkDetached(pv *v1.PersistentVolume) error {
	if p.attachments == nil {
		return nil
	}
	attachments, err := p.attachments.OfVolume(pv.Name)
	if err != nil {
		return fmt.Errorf("failed to list volumeattachments: %w", err)
	}
	if len(attachments) > 0 {
		return fmt.Errorf("persistentvolume %s is still attached to node %s", pv.Name, attachments[0].Spec.NodeName)
	}
	return nil
}
