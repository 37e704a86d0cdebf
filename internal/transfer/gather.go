package transfer

import (
	"context"
	"slices"
	"strings"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/transfer/match"
	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// gather reads from the caches everything plan.Next needs for r, and the
// tokens that spec.tokenSecretRef and spec.requestTokenSecretRef name from
// the API server.
func (c *Controller) gather(ctx context.Context, r *transferv1alpha1.StorageTransferRequest) (*plan.Observed, error) {
	objs, _ := c.accepts.GetIndexer().ByIndex(byRequest, r.Namespace+"/"+r.Name)
	accepts := make([]*transferv1alpha1.StorageTransferAccept, 0, len(objs))
	for _, o := range objs {
		accepts = append(accepts, o.(*transferv1alpha1.StorageTransferAccept))
	}
	// The index's order is a map's: sorted, one world is decided and told
	// the same way every time.
	slices.SortFunc(accepts, func(a, b *transferv1alpha1.StorageTransferAccept) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	tokens, err := c.tokens(ctx, r, accepts)
	if err != nil {
		return nil, err
	}
	o := &plan.Observed{Request: r, Match: match.DecideWith(r, accepts, tokens)}
	targetNS := plan.TargetNamespace(o)
	rec := r.Status.Record
	switch r.Spec.Source.Kind {
	case transferv1alpha1.KindVolumeSnapshot:
		o.SourceSnapshot = getAs[*snapv1.VolumeSnapshot](c.snapshots, r.Namespace+"/"+r.Spec.Source.Name)
		contentName := ""
		switch {
		case rec != nil:
			contentName = rec.SourceContentName
		case o.SourceSnapshot != nil && o.SourceSnapshot.Status != nil && o.SourceSnapshot.Status.BoundVolumeSnapshotContentName != nil:
			contentName = *o.SourceSnapshot.Status.BoundVolumeSnapshotContentName
		}
		if contentName != "" {
			o.SourceContent = getAs[*snapv1.VolumeSnapshotContent](c.contents, contentName)
		}
		o.TargetContent = getAs[*snapv1.VolumeSnapshotContent](c.contents, plan.TargetContentName(r))
		if rec != nil && rec.Returning {
			o.ReturnContent = getAs[*snapv1.VolumeSnapshotContent](c.contents, plan.ReturnContentName(r))
		}
		if targetNS != "" {
			o.TargetSnapshot = getAs[*snapv1.VolumeSnapshot](c.snapshots, targetNS+"/"+r.Spec.TargetName)
		}
	case transferv1alpha1.KindPersistentVolumeClaim:
		o.SourceClaim = getAs[*v1.PersistentVolumeClaim](c.claims, r.Namespace+"/"+r.Spec.Source.Name)
		volumeName := ""
		switch {
		case rec != nil:
			volumeName = rec.VolumeName
		case o.SourceClaim != nil:
			volumeName = o.SourceClaim.Spec.VolumeName
		}
		if volumeName != "" {
			o.Volume = getAs[*v1.PersistentVolume](c.volumes, volumeName)
		}
		if targetNS != "" {
			o.TargetClaim = getAs[*v1.PersistentVolumeClaim](c.claims, targetNS+"/"+r.Spec.TargetName)
		}
		pods, _ := c.pods.GetIndexer().ByIndex(byClaim, r.Namespace+"/"+r.Spec.Source.Name)
		for _, p := range pods {
			pod := p.(*v1.Pod)
			if pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed {
				o.Pods = append(o.Pods, pod.Name)
			}
		}
		// The index's order is a map's: sorted, one world says one thing
		// (a message that changed would be a status write and an event).
		slices.Sort(o.Pods)
	}
	var src metav1.Object
	switch {
	case o.SourceSnapshot != nil:
		src = o.SourceSnapshot
	case o.SourceClaim != nil:
		src = o.SourceClaim
	}
	if src != nil {
		if holder := src.GetAnnotations()[plan.LockAnnotation]; holder != "" && holder != string(r.UID) {
			held, _ := c.requests.GetIndexer().ByIndex(byUID, holder)
			o.LockHolderExists = len(held) > 0
		}
	}
	return o, nil
}

// getAs returns the object of key in inf's cache, or the zero T.
func getAs[T any](inf cache.SharedIndexInformer, key string) T {
	var zero T
	obj, ok, err := inf.GetStore().GetByKey(key)
	if err != nil || !ok {
		return zero
	}
	t, _ := obj.(T)
	return t
}
