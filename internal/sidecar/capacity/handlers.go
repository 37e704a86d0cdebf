package capacity

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/client-go/tools/cache"
)

// addEventHandlers queues work when what the objects depend on changes: a
// storage class of the driver (its keys are refreshed at once), a node's
// labels or the driver's topology keys on a node (the segments may have
// changed), or one of the objects (someone else changed or deleted it, or
// the cache caught up with a write).
func (c *Controller) addEventHandlers(cfg Config) error {
	type registration struct {
		informer cache.SharedInformer
		handler  cache.ResourceEventHandler
	}
	regs := []registration{
		{cfg.StorageClasses.Informer(), eventHandler(c, func(old, obj *storagev1.StorageClass) {
			if old == nil || old.ResourceVersion != obj.ResourceVersion {
				c.classChanged(obj)
			}
		})},
		{c.capacities, eventHandler(c, func(old, obj *storagev1.CSIStorageCapacity) {
			c.observed(obj)
			if old != nil && keyOf(old) != keyOf(obj) {
				c.enqueue(item{key: keyOf(old)})
			}
		})},
	}
	if c.fixed == nil {
		regs = append(regs,
			registration{cfg.Nodes.Informer(), eventHandler(c, func(old, obj *v1.Node) {
				if old == nil || !maps.Equal(old.Labels, obj.Labels) {
					c.enqueue(sweepItem)
				}
			})},
			registration{cfg.CSINodes.Informer(), eventHandler(c, func(old, obj *storagev1.CSINode) {
				keys, runs := driverTopologyKeys(obj, c.policy.DriverName)
				if old == nil {
					if runs {
						c.enqueue(sweepItem)
					}
					return
				}
				oldKeys, ran := driverTopologyKeys(old, c.policy.DriverName)
				if runs != ran || !slices.Equal(keys, oldKeys) {
					c.enqueue(sweepItem)
				}
			})},
		)
	}
	for _, r := range regs {
		if _, err := r.informer.AddEventHandler(r.handler); err != nil {
			return fmt.Errorf("add storage capacity event handler: %w", err)
		}
	}
	return nil
}

// eventHandler calls changed(nil, obj) for an added or deleted object and
// changed(old, new) for an update, and counts every event.
func eventHandler[T any](c *Controller, changed func(old, obj *T)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			defer c.events.Add(1)
			if o, ok := obj.(*T); ok {
				changed(nil, o)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			defer c.events.Add(1)
			old, okOld := oldObj.(*T)
			o, ok := newObj.(*T)
			if okOld && ok {
				changed(old, o)
			}
		},
		DeleteFunc: func(obj any) {
			defer c.events.Add(1)
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if o, ok := obj.(*T); ok {
				changed(nil, o)
			}
		},
	}
}

// classChanged refreshes the keys of a class of the driver at once: a new
// class needs objects, a changed or re-created one may report differently.
// The sweep plans them (or their deletion).
func (c *Controller) classChanged(class *storagev1.StorageClass) {
	if class.Provisioner != c.policy.DriverName {
		return
	}
	c.mu.Lock()
	for k := range c.reports {
		if k.Class == class.Name {
			delete(c.reports, k)
		}
	}
	c.mu.Unlock()
	c.enqueue(sweepItem)
}

// observed forgets what this controller wrote of obj, now that the cache
// has reported the object (in any version: an older one makes the next
// update conflict and retry, which is safe), and queues its key.
func (c *Controller) observed(obj *storagev1.CSIStorageCapacity) {
	c.mu.Lock()
	c.written.forget(obj.UID)
	c.mu.Unlock()
	c.enqueue(item{key: keyOf(obj)})
}
