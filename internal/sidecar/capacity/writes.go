package capacity

import (
	"context"
	"errors"
	"fmt"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// apply makes the writes of a plan. It tries all of them and returns what
// failed.
func (c *Controller) apply(ctx context.Context, r Result) error {
	logger := klog.FromContext(ctx)
	api := c.client.StorageV1().CSIStorageCapacities(c.policy.Namespace)
	var errs []error
	for _, obj := range r.Create {
		created, err := api.Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("create CSIStorageCapacity for storage class %q in segment %s: %w",
				obj.StorageClassName, segmentString(obj), err))
			continue
		}
		c.remember(created)
		logger.V(3).Info("Created CSIStorageCapacity", "capacity", klog.KObj(created), "storageClass", created.StorageClassName,
			"segment", segmentString(created), "available", created.Capacity, "maximumVolumeSize", created.MaximumVolumeSize)
	}
	for _, obj := range r.Update {
		updated, err := api.Update(ctx, obj, metav1.UpdateOptions{})
		if err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				// What this controller remembered is stale: go by the cache.
				c.forget(obj.UID)
			}
			errs = append(errs, fmt.Errorf("update CSIStorageCapacity %s: %w", obj.Name, err))
			continue
		}
		c.remember(updated)
		logger.V(4).Info("Updated CSIStorageCapacity", "capacity", klog.KObj(updated), "storageClass", updated.StorageClassName,
			"segment", segmentString(updated), "available", updated.Capacity, "maximumVolumeSize", updated.MaximumVolumeSize)
	}
	for _, d := range r.Delete {
		uid := d.Object.UID
		err := api.Delete(ctx, d.Object.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete CSIStorageCapacity %s: %w", d.Object.Name, err))
			continue
		}
		c.forget(uid)
		logger.V(3).Info("Deleted CSIStorageCapacity", "capacity", klog.KObj(d.Object), "storageClass", d.Object.StorageClassName,
			"segment", segmentString(d.Object), "reason", d.Reason)
	}
	return errors.Join(errs...)
}

// segmentString shows an object's segment in logs and errors.
func segmentString(obj *storagev1.CSIStorageCapacity) string {
	if seg, ok := segmentOf(obj.NodeTopology); ok {
		return seg.String()
	}
	return fmt.Sprintf("(none: nodeTopology %v)", obj.NodeTopology)
}

func (c *Controller) remember(obj *storagev1.CSIStorageCapacity) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.written.remember(obj)
}

func (c *Controller) forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.written.forget(uid)
}

// withWritten is what exists of the cached objects (of key k, or all):
// with this controller's own writes that the cache has not reported back
// yet. Call with c.mu held.
func (c *Controller) withWritten(cached []*storagev1.CSIStorageCapacity, k *Key) []*storagev1.CSIStorageCapacity {
	return c.written.overlay(cached, k)
}

// writtenObjects are the objects this controller wrote that its cache has
// not reported back yet. Until it does, they are what exists: a worker that
// acts again before the cache has caught up neither creates a second object
// nor updates from a stale version. The cache reporting the object in any
// version ends the entry. An entry the cache never reports back (the object
// was deleted between the write and remember) ages out after one to two
// poll intervals, so it cannot hide a missing object for long.
type writtenObjects struct {
	current, previous map[types.UID]*storagev1.CSIStorageCapacity
}

func (w *writtenObjects) remember(obj *storagev1.CSIStorageCapacity) {
	if w.current == nil {
		w.current = map[types.UID]*storagev1.CSIStorageCapacity{}
	}
	delete(w.previous, obj.UID)
	w.current[obj.UID] = obj
}

func (w *writtenObjects) forget(uid types.UID) {
	delete(w.current, uid)
	delete(w.previous, uid)
}

// age starts a new poll interval: entries from before the previous one go.
func (w *writtenObjects) age() {
	w.previous, w.current = w.current, nil
}

func (w *writtenObjects) get(uid types.UID) *storagev1.CSIStorageCapacity {
	if obj, ok := w.current[uid]; ok {
		return obj
	}
	return w.previous[uid]
}

// overlay replaces cached objects by what was written of them and adds the
// written objects the cache lacks (of key k, or all).
func (w *writtenObjects) overlay(cached []*storagev1.CSIStorageCapacity, k *Key) []*storagev1.CSIStorageCapacity {
	if len(w.current)+len(w.previous) == 0 {
		return cached
	}
	out := make([]*storagev1.CSIStorageCapacity, 0, len(cached))
	seen := make(map[types.UID]bool, len(cached))
	for _, obj := range cached {
		seen[obj.UID] = true
		if written := w.get(obj.UID); written != nil {
			obj = written
		}
		out = append(out, obj)
	}
	for _, m := range []map[types.UID]*storagev1.CSIStorageCapacity{w.current, w.previous} {
		for uid, obj := range m {
			if !seen[uid] && (k == nil || keyOf(obj) == *k) {
				seen[uid] = true
				out = append(out, obj)
			}
		}
	}
	return out
}
