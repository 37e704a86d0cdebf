package sourceprotection

import (
	"context"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// The API calls on a source, a VolumeSnapshot or a PersistentVolumeClaim.

// patchObject applies a patch of type pt: a JSON patch of the finalizers,
// a merge patch of the in-use marks.
func (p *Protector) patchObject(ctx context.Context, src datasource.Source, pt types.PatchType, patch []byte) (metav1.Object, error) {
	if src.Type() == datasource.Snapshot {
		return p.cfg.SnapshotClient.SnapshotV1().VolumeSnapshots(src.Namespace).Patch(ctx, src.Name, pt, patch, metav1.PatchOptions{})
	}
	return p.cfg.Client.CoreV1().PersistentVolumeClaims(src.Namespace).Patch(ctx, src.Name, pt, patch, metav1.PatchOptions{})
}

func (p *Protector) getObject(ctx context.Context, src datasource.Source) (metav1.Object, error) {
	if src.Type() == datasource.Snapshot {
		return p.cfg.SnapshotClient.SnapshotV1().VolumeSnapshots(src.Namespace).Get(ctx, src.Name, metav1.GetOptions{})
	}
	return p.cfg.Client.CoreV1().PersistentVolumeClaims(src.Namespace).Get(ctx, src.Name, metav1.GetOptions{})
}

// updateObject writes obj, which getObject returned (copied), with the
// resourceVersion it was read at.
func (p *Protector) updateObject(ctx context.Context, src datasource.Source, obj metav1.Object) (metav1.Object, error) {
	if snap, ok := obj.(*snapv1.VolumeSnapshot); ok {
		return p.cfg.SnapshotClient.SnapshotV1().VolumeSnapshots(src.Namespace).Update(ctx, snap, metav1.UpdateOptions{})
	}
	return p.cfg.Client.CoreV1().PersistentVolumeClaims(src.Namespace).Update(ctx, obj.(*v1.PersistentVolumeClaim), metav1.UpdateOptions{})
}

// copyMeta deep-copies an object getObject returned.
func copyMeta(obj metav1.Object) metav1.Object {
	if snap, ok := obj.(*snapv1.VolumeSnapshot); ok {
		return snap.DeepCopy()
	}
	return obj.(*v1.PersistentVolumeClaim).DeepCopy()
}
