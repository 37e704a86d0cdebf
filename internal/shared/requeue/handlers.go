package requeue

import (
	"reflect"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// SnapshotHandler re-queues the claims restoring a snapshot when the
// snapshot appears, is deleted, or its status or deletion changes.
func (c *Claims) SnapshotHandler() cache.ResourceEventHandler {
	return onChange(func(s *snapv1.VolumeSnapshot) { c.requeueSnapshot(s.Namespace, s.Name) },
		func(o, n *snapv1.VolumeSnapshot) bool {
			// e.g. our own finalizer: nothing a waiting claim cares about
			return reflect.DeepEqual(o.Status, n.Status) && o.DeletionTimestamp.Equal(n.DeletionTimestamp)
		})
}

// ContentHandler re-queues the claims restoring the snapshot a content is
// bound to when the content changes (ready, handle, driver, annotations).
func (c *Claims) ContentHandler() cache.ResourceEventHandler {
	return onChange(func(content *snapv1.VolumeSnapshotContent) {
		ref := content.Spec.VolumeSnapshotRef
		c.requeueSnapshot(ref.Namespace, ref.Name)
	}, func(_, _ *snapv1.VolumeSnapshotContent) bool { return false })
}

// CloneSourceHandler re-queues the claims cloning a claim when that claim
// changes, e.g. when it becomes bound. Register it on the PVC informer.
func (c *Claims) CloneSourceHandler() cache.ResourceEventHandler {
	return onChange(func(claim *v1.PersistentVolumeClaim) { c.requeueClones(claim.Namespace, claim.Name) },
		func(o, n *v1.PersistentVolumeClaim) bool {
			return o.Status.Phase == n.Status.Phase && o.Spec.VolumeName == n.Spec.VolumeName &&
				o.DeletionTimestamp.Equal(n.DeletionTimestamp)
		})
}

// CloneSourceVolumeHandler re-queues the claims cloning a claim when the PV
// whose claimRef names that claim appears, goes, or changes its spec or
// phase. A clone is decided on the source claim and its PV, read from two
// caches that are not in step: a clone decided between the claim's Bound
// update and its PV's is refused as not bound yet, and that unchanged
// refusal is not attempted again (internal/sidecar/provisioner), so only the PV's event
// can end the wait before the informers' resync (issue 21, defect 8).
// Register it on the PV informer.
func (c *Claims) CloneSourceVolumeHandler() cache.ResourceEventHandler {
	return onChange(func(pv *v1.PersistentVolume) {
		if ref := pv.Spec.ClaimRef; ref != nil {
			c.requeueClones(ref.Namespace, ref.Name)
		}
	}, func(o, n *v1.PersistentVolume) bool {
		return o.Status.Phase == n.Status.Phase && reflect.DeepEqual(o.Spec, n.Spec) // e.g. a finalizer
	})
}

// LinkHandler re-queues the claims restoring through a VolumeSnapshotLink
// when the link appears or is deleted. Its spec is immutable, so an update
// (the sidecar's own status write, a label) changes nothing a claim waits
// for. Register it on the link informer.
func (c *Claims) LinkHandler() cache.ResourceEventHandler {
	return onChange(func(l *snapv1alpha1.VolumeSnapshotLink) { c.Requeue(LinkKey(l.Namespace, l.Name)) },
		func(_, _ *snapv1alpha1.VolumeSnapshotLink) bool { return true })
}

// onChange is an event handler that calls requeue with the object of every
// add, delete (a tombstone's last state) and update, but for an update
// that unchanged says changed nothing a waiting claim reads.
func onChange[T any](requeue func(T), unchanged func(o, n T) bool) cache.ResourceEventHandler {
	call := func(obj any) {
		if t, ok := unwrap(obj).(T); ok {
			requeue(t)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    call,
		DeleteFunc: call,
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(T)
			n, ok2 := newObj.(T)
			if ok1 && ok2 && unchanged(o, n) {
				return
			}
			call(newObj)
		},
	}
}

// requeueClones re-queues the claims cloning the claim namespace/name.
func (c *Claims) requeueClones(namespace, name string) int {
	return c.Requeue(SourceKey(datasource.Source{Kind: datasource.ClaimKind, Namespace: namespace, Name: name}))
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
