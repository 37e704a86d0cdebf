package requeue

import (
	"reflect"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/datasource"
)

// SnapshotHandler re-queues the claims restoring a snapshot when the
// snapshot appears, is deleted, or its status or deletion changes.
func (c *Claims) SnapshotHandler() cache.ResourceEventHandler {
	requeue := func(obj any) {
		if s, ok := unwrap(obj).(*snapv1.VolumeSnapshot); ok {
			c.requeueSnapshot(s.Namespace, s.Name)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    requeue,
		DeleteFunc: requeue,
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*snapv1.VolumeSnapshot)
			n, ok2 := newObj.(*snapv1.VolumeSnapshot)
			if ok1 && ok2 && reflect.DeepEqual(o.Status, n.Status) && o.DeletionTimestamp.Equal(n.DeletionTimestamp) {
				return // e.g. our own finalizer: nothing a waiting claim cares about
			}
			requeue(newObj)
		},
	}
}

// ContentHandler re-queues the claims restoring the snapshot a content is
// bound to when the content changes (ready, handle, driver, annotations).
func (c *Claims) ContentHandler() cache.ResourceEventHandler {
	requeue := func(obj any) {
		if content, ok := unwrap(obj).(*snapv1.VolumeSnapshotContent); ok {
			ref := content.Spec.VolumeSnapshotRef
			c.requeueSnapshot(ref.Namespace, ref.Name)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    requeue,
		DeleteFunc: requeue,
		UpdateFunc: func(_, newObj any) { requeue(newObj) },
	}
}

// CloneSourceHandler re-queues the claims cloning a claim when that claim
// changes, e.g. when it becomes bound. Register it on the PVC informer.
func (c *Claims) CloneSourceHandler() cache.ResourceEventHandler {
	requeue := func(obj any) {
		if claim, ok := unwrap(obj).(*v1.PersistentVolumeClaim); ok {
			c.Requeue(SourceKey(datasource.Source{Kind: datasource.ClaimKind, Namespace: claim.Namespace, Name: claim.Name}))
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    requeue,
		DeleteFunc: requeue,
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*v1.PersistentVolumeClaim)
			n, ok2 := newObj.(*v1.PersistentVolumeClaim)
			if ok1 && ok2 && o.Status.Phase == n.Status.Phase && o.Spec.VolumeName == n.Spec.VolumeName &&
				o.DeletionTimestamp.Equal(n.DeletionTimestamp) {
				return
			}
			requeue(newObj)
		},
	}
}

// LinkHandler re-queues the claims restoring through a VolumeSnapshotLink
// when the link appears or is deleted. Its spec is immutable, so an update
// (the sidecar's own status write, a label) changes nothing a claim waits
// for. Register it on the link informer.
func (c *Claims) LinkHandler() cache.ResourceEventHandler {
	requeue := func(obj any) {
		if l, ok := unwrap(obj).(*snapv1alpha1.VolumeSnapshotLink); ok {
			c.Requeue(LinkKey(l.Namespace, l.Name))
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    requeue,
		DeleteFunc: requeue,
	}
}

// requeueSnapshot re-queues the claims restoring the snapshot, directly or
// through a link.
func (c *Claims) requeueSnapshot(namespace, name string) {
	c.Requeue(SourceKey(snapshotSource(namespace, name)))
	if c.links != nil {
		c.requeueLinks(c.links.LinksTo(namespace, name))
	}
}

func snapshotSource(namespace, name string) datasource.Source {
	return datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: namespace, Name: name}
}

func unwrap(obj any) any {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return tomb.Obj
	}
	return obj
}
