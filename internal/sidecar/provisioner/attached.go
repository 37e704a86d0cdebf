package provisioner

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// Attachments reads the VolumeAttachments of a PV from a cache. The error
// says why the cache cannot be read yet (e.g. no RBAC to list them).
type Attachments interface {
	OfVolume(pv string) ([]*storagev1.VolumeAttachment, error)
}

// checkDetached refuses, as upstream does, to delete a volume that a
// VolumeAttachment still attaches to a node: DeleteVolume of an attached
// volume fails or, with some drivers, destroys data in use. As upstream
// v6.4.0, the refusal is the library's VolumeInUseError, returned as it is
// (the library does not unwrap it): the library retries the deletion until
// the attachment is gone, with a Normal VolumeDelete event instead of a
// VolumeFailedDelete warning, and does not count a failed deletion. A
// volume is commonly still attached for a moment when its workload and
// claim are deleted together. Without an attachment cache (a driver
// without PUBLISH_UNPUBLISH_VOLUME) there is nothing to check; a cache
// that cannot be read is a failure.
func (p *Provisioner) checkDetached(pv *v1.PersistentVolume) error {
	if p.attachments == nil {
		return nil
	}
	attachments, err := p.attachments.OfVolume(pv.Name)
	if err != nil {
		return fmt.Errorf("failed to list volumeattachments: %w", err)
	}
	if len(attachments) > 0 {
		return &controller.VolumeInUseError{
			Reason: fmt.Sprintf("persistentvolume %s is still attached to node %s, waiting for detach", pv.Name, attachments[0].Spec.NodeName)}
	}
	return nil
}
