package provisioner

import (
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	csiclient "github.com/xns-csi/csi-provisioner/internal/sidecar/csi"
)

// No DeleteVolume while a VolumeAttachment attaches the PV, as upstream
// v6.4.0 (canDeleteVolume, and TestDeleteVolumeAttachment's in-use cases)
// for drivers with PUBLISH_UNPUBLISH_VOLUME: the refusal is the library's
// VolumeInUseError, which it retries without a warning event.

// attaching is a driver with PUBLISH_UNPUBLISH_VOLUME.
var attaching = capsWith(func(c *csiclient.Capabilities) { c.PublishUnpublishVolume = true })

// attachment attaches the PV pvName to node-1.
func attachment() *storagev1.VolumeAttachment {
	return &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "csi-123"},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: driver, NodeName: "node-1",
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To(pvName)}}}
}

func TestNoDeletionWhileAttached(t *testing.T) {
	otherAttachment := attachment()
	otherAttachment.Spec.Source.PersistentVolumeName = ptr.To("pvc-other")
	notAttached := attachment()
	notAttached.Status.Attached = false
	detaching := attachment()
	detaching.Status.Attached = true
	detaching.DeletionTimestamp = ptr.To(metav1.Now())
	detaching.Finalizers = []string{"external-attacher/" + driver}
	runFramework(t, []frameworkCase{
		{
			name:    "an attached volume is not deleted; once detached it is",
			caps:    attaching,
			objects: []runtime.Object{provisionedVolume(), attachment()},
			steps:   []step{deleteVolume(pvName), remove(attachment()), deleteVolume(pvName, deleted)},
			want: []string{"delete " + pvName + ": in use: persistentvolume " + pvName + " is still attached to node node-1, waiting for detach",
				"> volumeattachments csi-123 deleted",
				"DeleteVolume id-" + pvName, "delete " + pvName + ": done"},
		},
		{
			name:    "an attachment that is not attached yet, or is being deleted, still refuses, as upstream",
			caps:    attaching,
			objects: []runtime.Object{provisionedVolume(), notAttached},
			steps:   []step{deleteVolume(pvName), remove(notAttached), update(detaching), deleteVolume(pvName)},
			want: []string{"delete " + pvName + ": in use: persistentvolume " + pvName + " is still attached to node node-1, waiting for detach",
				"> volumeattachments csi-123 deleted", "> volumeattachments csi-123 updated",
				"delete " + pvName + ": in use: persistentvolume " + pvName + " is still attached to node node-1, waiting for detach"},
		},
		{
			name:    "another volume's attachment does not matter",
			caps:    attaching,
			objects: []runtime.Object{provisionedVolume(), otherAttachment},
			steps:   []step{deleteVolume(pvName, deleted)},
			want:    []string{"DeleteVolume id-" + pvName, "delete " + pvName + ": done"},
		},
		{
			name:                  "nothing is deleted while VolumeAttachments cannot be read",
			caps:                  attaching,
			attachmentsUnreadable: true,
			objects:               []runtime.Object{provisionedVolume()},
			steps:                 []step{deleteVolume(pvName)},
			want: []string{"delete " + pvName + ": error: failed to list volumeattachments: " +
				"cannot list storage.k8s.io/v1/volumeattachments: forbidden"},
		},
		{
			name:    "a driver that does not attach volumes is not checked, as upstream",
			objects: []runtime.Object{provisionedVolume(), attachment()},
			steps:   []step{deleteVolume(pvName, deleted)},
			want:    []string{"DeleteVolume id-" + pvName, "delete " + pvName + ": done"},
		},
	})
}
