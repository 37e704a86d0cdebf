package snapshotwebhook

import (
	"fmt"

	groupsnapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumegroupsnapshot/v1"
	groupsnapv1beta1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumegroupsnapshot/v1beta1"
	groupsnapv1beta2 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumegroupsnapshot/v1beta2"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
	"github.com/xns-csi/csi-provisioner/internal/snapshotwebhook/snapshotvalidation"
)

// classCache is the informer cache of one kind of class, for the
// default-class rule. The class CRDs may be missing or not readable yet
// (optionalapi): until the cache syncs, List says why, and the webhook
// allows new defaults rather than guess.
type classCache struct {
	api *optionalapi.API
	// handlers are added to each informer the cache runs (AddHandler).
	handlers []cache.ResourceEventHandler
	// onSynced are called each time the cache can be read (OnSynced).
	onSynced []func()
}

// OnSynced makes f be called each time the cache becomes readable: the
// handlers may see the objects of the initial list before List can be
// read. Call before the cache runs.
func (c *classCache) OnSynced(f func()) { c.onSynced = append(c.onSynced, f) }

// synced calls the OnSynced functions.
func (c *classCache) synced(optionalapi.Candidate) {
	for _, f := range c.onSynced {
		f()
	}
}

// reference returns the reference of the cached class name of kind, for
// an event (with its UID, which kubectl describe matches), nil when the
// cache does not hold it.
func (c *classCache) reference(kind, name string) *v1.ObjectReference {
	inf, candidate, err := c.api.Informer()
	if err != nil {
		return nil
	}
	obj, ok, err := inf.GetStore().GetByKey(name)
	if err != nil || !ok {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return &v1.ObjectReference{Kind: kind, APIVersion: candidate.GroupVersion.String(), Name: name, UID: m.GetUID(),
		ResourceVersion: m.GetResourceVersion()}
}

// AddHandler adds h to the class informer. Call before the cache runs.
func (c *classCache) AddHandler(h cache.ResourceEventHandler) { c.handlers = append(c.handlers, h) }

// prepare adds the handlers to a new informer.
func (c *classCache) prepare(_ optionalapi.Candidate, inf cache.SharedIndexInformer) error {
	for _, h := range c.handlers {
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
	}
	return nil
}

// newSnapshotClassCache watches the VolumeSnapshotClasses once disc says
// they are served.
func newSnapshotClassCache(client snapclientset.Interface, disc discovery.DiscoveryInterface) *classCache {
	c := &classCache{}
	c.api = optionalapi.New(optionalapi.Config{
		Name: "VolumeSnapshotClass", Discovery: disc, Prepare: c.prepare, OnSynced: c.synced,
		Candidates: []optionalapi.Candidate{{GroupVersion: snapv1.SchemeGroupVersion, Resource: snapshotClasses, Object: &snapv1.VolumeSnapshotClass{},
			ListWatch: func() *cache.ListWatch {
				classes := client.SnapshotV1().VolumeSnapshotClasses()
				return optionalapi.NewListWatch(classes.List, classes.Watch)
			}}},
		WhileRefused: "a new default VolumeSnapshotClass is allowed without checking the others",
	})
	return c
}

// newGroupSnapshotClassCache watches the VolumeGroupSnapshotClasses, in
// the newest version the cluster serves: the group snapshot API is still
// served as v1beta1 or v1beta2 by older CRDs.
func newGroupSnapshotClassCache(client snapclientset.Interface, disc discovery.DiscoveryInterface) *classCache {
	c := &classCache{}
	c.api = optionalapi.New(optionalapi.Config{
		Name: "VolumeGroupSnapshotClass", Discovery: disc, Prepare: c.prepare, OnSynced: c.synced,
		Candidates: []optionalapi.Candidate{
			{GroupVersion: groupsnapv1.SchemeGroupVersion, Resource: groupSnapshotClasses, Object: &groupsnapv1.VolumeGroupSnapshotClass{},
				ListWatch: func() *cache.ListWatch {
					classes := client.GroupsnapshotV1().VolumeGroupSnapshotClasses()
					return optionalapi.NewListWatch(classes.List, classes.Watch)
				}},
			{GroupVersion: groupsnapv1beta2.SchemeGroupVersion, Resource: groupSnapshotClasses, Object: &groupsnapv1beta2.VolumeGroupSnapshotClass{},
				ListWatch: func() *cache.ListWatch {
					classes := client.GroupsnapshotV1beta2().VolumeGroupSnapshotClasses()
					return optionalapi.NewListWatch(classes.List, classes.Watch)
				}},
			{GroupVersion: groupsnapv1beta1.SchemeGroupVersion, Resource: groupSnapshotClasses, Object: &groupsnapv1beta1.VolumeGroupSnapshotClass{},
				ListWatch: func() *cache.ListWatch {
					classes := client.GroupsnapshotV1beta1().VolumeGroupSnapshotClasses()
					return optionalapi.NewListWatch(classes.List, classes.Watch)
				}},
		},
		WhileRefused: "a new default VolumeGroupSnapshotClass is allowed without checking the others",
	})
	return c
}

// List returns the classes in the cache, or why there is no cache to read.
func (c *classCache) List() ([]snapshotvalidation.Class, error) {
	inf, _, err := c.api.Informer()
	if err != nil {
		return nil, err
	}
	objs := inf.GetStore().List()
	classes := make([]snapshotvalidation.Class, 0, len(objs))
	for _, obj := range objs {
		class, err := classOf(obj)
		if err != nil {
			return nil, err
		}
		classes = append(classes, class)
	}
	return classes, nil
}

// classOf is what the default-class rule needs of a cached class.
func classOf(obj any) (snapshotvalidation.Class, error) {
	group := snapshotvalidation.GroupSnapshotClassKind
	switch class := obj.(type) {
	case *snapv1.VolumeSnapshotClass:
		return snapshotvalidation.SnapshotClass(class), nil
	case *groupsnapv1.VolumeGroupSnapshotClass:
		return snapshotvalidation.NewClass(group, class.Name, class.Driver, class.Annotations), nil
	case *groupsnapv1beta2.VolumeGroupSnapshotClass:
		return snapshotvalidation.NewClass(group, class.Name, class.Driver, class.Annotations), nil
	case *groupsnapv1beta1.VolumeGroupSnapshotClass:
		return snapshotvalidation.NewClass(group, class.Name, class.Driver, class.Annotations), nil
	default:
		return snapshotvalidation.Class{}, fmt.Errorf("unexpected %T in a class cache", obj)
	}
}
