// Package snapshotcache keeps VolumeSnapshots and VolumeSnapshotContents in
// informer caches that start whenever the snapshot CRDs are served, so the
// sidecar starts and provisions everything else on clusters without them.
package snapshotcache

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/pkg/cachetrim"
	"github.com/xns-csi/csi-provisioner/pkg/optionalapi"
)

// Config holds what the caches need.
type Config struct {
	// Client lists and watches the snapshot API.
	Client snapclientset.Interface
	// Discovery tells whether the snapshot CRDs are served.
	Discovery discovery.DiscoveryInterface
	// ResyncPeriod of the informers; PollInterval of discovery while absent.
	ResyncPeriod, PollInterval time.Duration
	// OnSynced, if set, is called once both caches have synced, and again
	// whenever they can be read after a lost watch, so claims refused while
	// they could not be read can be re-queued.
	OnSynced func()
}

// Cache reads snapshots and contents from the informer caches.
type Cache struct {
	snapshots, contents               *optionalapi.API
	snapshotHandlers, contentHandlers []cache.ResourceEventHandler
	syncedCount                       atomic.Int32
}

// synced calls onSynced when both caches can be read: when the second has
// synced, and when either becomes usable again after a lost watch.
func (c *Cache) synced(onSynced func()) {
	if c.syncedCount.Add(1) < 2 || onSynced == nil {
		return
	}
	if _, _, err := c.snapshots.Informer(); err != nil {
		return
	}
	if _, _, err := c.contents.Informer(); err != nil {
		return
	}
	onSynced()
}

// AddSnapshotHandler adds h to the snapshot informer. Call before Run.
func (c *Cache) AddSnapshotHandler(h cache.ResourceEventHandler) {
	c.snapshotHandlers = append(c.snapshotHandlers, h)
}

// AddContentHandler adds h to the content informer. Call before Run.
func (c *Cache) AddContentHandler(h cache.ResourceEventHandler) {
	c.contentHandlers = append(c.contentHandlers, h)
}

// New returns a Cache; nothing is watched until Run.
func New(cfg Config) *Cache {
	gv := snapv1.SchemeGroupVersion
	c := &Cache{}
	prepare := func(trim cache.TransformFunc, handlers *[]cache.ResourceEventHandler) func(optionalapi.Candidate, cache.SharedIndexInformer) error {
		return func(_ optionalapi.Candidate, inf cache.SharedIndexInformer) error {
			if err := inf.SetTransform(trim); err != nil {
				return err
			}
			for _, h := range *handlers {
				if _, err := inf.AddEventHandler(h); err != nil {
					return err
				}
			}
			return nil
		}
	}
	c.snapshots = optionalapi.New(optionalapi.Config{
		Name: "VolumeSnapshot", Discovery: cfg.Discovery, PollInterval: cfg.PollInterval, ResyncPeriod: cfg.ResyncPeriod,
		Candidates: []optionalapi.Candidate{{GroupVersion: gv, Resource: "volumesnapshots", Object: &snapv1.VolumeSnapshot{},
			ListWatch: func() *cache.ListWatch {
				snapshots := cfg.Client.SnapshotV1().VolumeSnapshots(metav1.NamespaceAll)
				return optionalapi.NewListWatch(snapshots.List, snapshots.Watch)
			}}},
		Prepare:  prepare(cachetrim.Snapshot, &c.snapshotHandlers),
		OnSynced: func(optionalapi.Candidate) { c.synced(cfg.OnSynced) },
	})
	c.contents = optionalapi.New(optionalapi.Config{
		Name: "VolumeSnapshotContent", Discovery: cfg.Discovery, PollInterval: cfg.PollInterval, ResyncPeriod: cfg.ResyncPeriod,
		Candidates: []optionalapi.Candidate{{GroupVersion: gv, Resource: "volumesnapshotcontents", Object: &snapv1.VolumeSnapshotContent{},
			ListWatch: func() *cache.ListWatch {
				contents := cfg.Client.SnapshotV1().VolumeSnapshotContents()
				return optionalapi.NewListWatch(contents.List, contents.Watch)
			}}},
		Prepare:  prepare(cachetrim.Content, &c.contentHandlers),
		OnSynced: func(optionalapi.Candidate) { c.synced(cfg.OnSynced) },
	})
	return c
}

// Run runs both caches until ctx is done. It never waits for them to sync.
func (c *Cache) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, api := range []*optionalapi.API{c.snapshots, c.contents} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			api.Run(ctx)
		}()
	}
	wg.Wait()
}

// GetSnapshot returns the cached snapshot, (nil, nil) when it does not
// exist, or an error saying why the cache cannot be read.
func (c *Cache) GetSnapshot(namespace, name string) (*snapv1.VolumeSnapshot, error) {
	obj, err := get(c.snapshots, namespace+"/"+name)
	if obj == nil || err != nil {
		return nil, err
	}
	return obj.(*snapv1.VolumeSnapshot), nil
}

// GetContent returns the cached content like GetSnapshot.
func (c *Cache) GetContent(name string) (*snapv1.VolumeSnapshotContent, error) {
	obj, err := get(c.contents, name)
	if obj == nil || err != nil {
		return nil, err
	}
	return obj.(*snapv1.VolumeSnapshotContent), nil
}

func get(api *optionalapi.API, key string) (any, error) {
	inf, _, err := api.Informer()
	if err != nil {
		return nil, err
	}
	obj, exists, err := inf.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return nil, err
	}
	return obj, nil
}
