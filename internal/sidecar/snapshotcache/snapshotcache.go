// Package snapshotcache keeps VolumeSnapshots and VolumeSnapshotContents in
// informer caches that start whenever the snapshot CRDs are served, so the
// sidecar starts and provisions everything else on clusters without them.
//
// The upstream csi-provisioner's RBAC grants get and list on
// VolumeSnapshotContents but not watch, because upstream GETs the content
// of every restore. With that RBAC unchanged the content informer is
// refused its watch, stopped, and checked again at growing intervals (see
// package optionalapi); meanwhile GetContent reads each content with a GET,
// as upstream does. The same holds for VolumeSnapshots when their list or
// watch is refused.
package snapshotcache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	snapscheme "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/scheme"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/cachetrim"
	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
)

// directReadTimeout bounds a GET made while an informer is refused, so that
// a stuck API server call does not hold a provisioning worker forever.
const directReadTimeout = 30 * time.Second

// Config holds what the caches need.
type Config struct {
	// Client lists and watches the snapshot API, and reads single objects
	// while an informer is refused.
	Client snapclientset.Interface
	// Discovery tells whether the snapshot CRDs are served.
	Discovery discovery.DiscoveryInterface
	// ResyncPeriod of the informers; PollInterval of discovery while absent,
	// and the first wait before a refused informer is checked again.
	ResyncPeriod, PollInterval time.Duration
	// OnSynced, if set, is called once both caches can be read, and again
	// whenever one can be read after a lost watch, or with a GET each after
	// the API server refused its informer, so claims refused while they
	// could not be read can be re-queued.
	//
	// While an informer is refused, nothing reports the changes of its
	// objects: a claim that waits for a snapshot or content to change
	// (e.g. to become ready) is not re-queued by the change but retried by
	// the controller library's rate-limited backoff (up to
	// --retry-interval-max), as with the upstream csi-provisioner.
	OnSynced func()
	// WatchList streams the informers' initial lists where the API server
	// supports it (see optionalapi.Config.WatchList); leave it off with
	// fake clientsets.
	WatchList bool
}

// Cache reads snapshots and contents from the informer caches, or with a
// GET each while the API server refuses an informer.
type Cache struct {
	client                            snapclientset.Interface
	snapshots, contents               *optionalapi.API
	snapshotHandlers, contentHandlers []cache.ResourceEventHandler
	syncedCount                       atomic.Int32
	// runCtx is Run's context, from which the direct reads derive theirs:
	// GetSnapshot and GetContent have none (claimsource.SnapshotReader).
	runCtx atomic.Pointer[context.Context]
	// settled is closed once both APIs have settled (see Settled).
	settled chan struct{}
}

// synced calls onSynced when both caches can be read: when the second has
// synced or been refused (then read with GETs), and when either becomes
// usable again.
func (c *Cache) synced(onSynced func()) {
	if c.syncedCount.Add(1) < 2 || onSynced == nil {
		return
	}
	if !readable(c.snapshots) || !readable(c.contents) {
		return
	}
	onSynced()
}

// readable reports whether api's objects can be read: from its cache, or
// with a GET while its informer is refused.
func readable(api *optionalapi.API) bool {
	_, _, err := api.Informer()
	return err == nil || errors.Is(err, optionalapi.ErrForbidden)
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
	c := &Cache{client: cfg.Client, settled: make(chan struct{})}
	prepare := func(handlers *[]cache.ResourceEventHandler) func(optionalapi.Candidate, cache.SharedIndexInformer) error {
		return func(_ optionalapi.Candidate, inf cache.SharedIndexInformer) error {
			for _, h := range *handlers {
				if _, err := inf.AddEventHandler(h); err != nil {
					return err
				}
			}
			return nil
		}
	}
	synced := func(optionalapi.Candidate) { c.synced(cfg.OnSynced) }
	c.snapshots = optionalapi.New(optionalapi.Config{
		Name: "VolumeSnapshot", Discovery: cfg.Discovery, PollInterval: cfg.PollInterval, ResyncPeriod: cfg.ResyncPeriod,
		Candidates: []optionalapi.Candidate{{GroupVersion: gv, Resource: "volumesnapshots", Object: &snapv1.VolumeSnapshot{},
			ListWatch: func() *cache.ListWatch {
				snapshots := cfg.Client.SnapshotV1().VolumeSnapshots(metav1.NamespaceAll)
				return optionalapi.NewListWatch(snapshots.List, snapshots.Watch)
			},
			ListStream: optionalapi.StreamLists(cfg.Client.SnapshotV1().RESTClient(), "volumesnapshots", snapscheme.ParameterCodec)}},
		Transform: cachetrim.Snapshot, Prepare: prepare(&c.snapshotHandlers), WatchList: cfg.WatchList,
		OnSynced: synced, OnRefused: synced,
		WhileRefused: "each restore reads its VolumeSnapshot with a GET; a claim waiting for a snapshot is " +
			"retried with the provisioning backoff instead of re-queued when the snapshot changes",
	})
	c.contents = optionalapi.New(optionalapi.Config{
		Name: "VolumeSnapshotContent", Discovery: cfg.Discovery, PollInterval: cfg.PollInterval, ResyncPeriod: cfg.ResyncPeriod,
		Candidates: []optionalapi.Candidate{{GroupVersion: gv, Resource: "volumesnapshotcontents", Object: &snapv1.VolumeSnapshotContent{},
			ListWatch: func() *cache.ListWatch {
				contents := cfg.Client.SnapshotV1().VolumeSnapshotContents()
				return optionalapi.NewListWatch(contents.List, contents.Watch)
			},
			ListStream: optionalapi.StreamLists(cfg.Client.SnapshotV1().RESTClient(), "volumesnapshotcontents", snapscheme.ParameterCodec)}},
		Transform: cachetrim.Content, Prepare: prepare(&c.contentHandlers), WatchList: cfg.WatchList,
		OnSynced: synced, OnRefused: synced,
		WhileRefused: "each restore reads its VolumeSnapshotContent with a GET, as the upstream csi-provisioner does; " +
			"a claim waiting for a content is retried with the provisioning backoff instead of re-queued when the content changes",
	})
	return c
}

// Settled is closed once Run has a first answer on both APIs; see
// optionalapi.API.Settled.
func (c *Cache) Settled() <-chan struct{} { return c.settled }

// APIStatus reports whether the VolumeSnapshot and the
// VolumeSnapshotContent caches can be read, for the sidecar's availability
// gauges. One that is forbidden is read with a GET per object meanwhile.
func (c *Cache) APIStatus() []optionalapi.Status {
	return []optionalapi.Status{c.snapshots.Status(), c.contents.Status()}
}

// Run runs both caches until ctx is done. It never waits for them to sync.
func (c *Cache) Run(ctx context.Context) {
	c.runCtx.Store(&ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, api := range []*optionalapi.API{c.snapshots, c.contents} {
			select {
			case <-api.Settled():
			case <-ctx.Done():
				return
			}
		}
		close(c.settled)
	})
	for _, api := range []*optionalapi.API{c.snapshots, c.contents} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			api.Run(ctx)
		}()
	}
	wg.Wait()
}

// GetSnapshot returns the snapshot, (nil, nil) when it does not exist, or an
// error saying why it cannot be read. It reads the cache, or the API server
// while the informer is refused (see the package comment).
func (c *Cache) GetSnapshot(namespace, name string) (*snapv1.VolumeSnapshot, error) {
	obj, err := c.read(c.snapshots, namespace+"/"+name, func(ctx context.Context) (runtime.Object, error) {
		return c.client.SnapshotV1().VolumeSnapshots(namespace).Get(ctx, name, metav1.GetOptions{})
	}, cachetrim.Snapshot)
	if obj == nil || err != nil {
		return nil, err
	}
	return obj.(*snapv1.VolumeSnapshot), nil
}

// ListSnapshots returns every cached snapshot, or an error saying why the
// cache cannot be read. Unlike GetSnapshot it never reads the API server:
// while the informer is refused, it returns the refusal.
func (c *Cache) ListSnapshots() ([]*snapv1.VolumeSnapshot, error) {
	inf, _, err := c.snapshots.Informer()
	if err != nil {
		return nil, err
	}
	objs := inf.GetIndexer().List()
	snaps := make([]*snapv1.VolumeSnapshot, 0, len(objs))
	for _, o := range objs {
		snaps = append(snaps, o.(*snapv1.VolumeSnapshot))
	}
	return snaps, nil
}

// GetContent returns the content like GetSnapshot. With the upstream
// csi-provisioner's RBAC (no watch on contents) it reads each one with a
// GET, as upstream does.
func (c *Cache) GetContent(name string) (*snapv1.VolumeSnapshotContent, error) {
	obj, err := c.read(c.contents, name, func(ctx context.Context) (runtime.Object, error) {
		return c.client.SnapshotV1().VolumeSnapshotContents().Get(ctx, name, metav1.GetOptions{})
	}, cachetrim.Content)
	if obj == nil || err != nil {
		return nil, err
	}
	return obj.(*snapv1.VolumeSnapshotContent), nil
}

// ReadsDirectly reports whether the API server refuses an informer of the
// cache, so that its objects are read with GETs (see read), and a change of
// them re-queues no claim.
func (c *Cache) ReadsDirectly() bool {
	for _, api := range []*optionalapi.API{c.snapshots, c.contents} {
		if _, _, err := api.Informer(); errors.Is(err, optionalapi.ErrForbidden) {
			return true
		}
	}
	return false
}

// read returns the object key from api's cache, nil when absent. While the
// API server refuses api's informer (optionalapi.ErrForbidden), it reads the
// object with get instead, trimmed as the cache would hold it; when that
// fails too, the error says both why.
func (c *Cache) read(api *optionalapi.API, key string, get func(context.Context) (runtime.Object, error), trim cache.TransformFunc) (any, error) {
	inf, _, err := api.Informer()
	if err == nil {
		obj, exists, err := inf.GetIndexer().GetByKey(key)
		if err != nil || !exists {
			return nil, err
		}
		return obj, nil
	}
	runCtx := c.runCtx.Load()
	if !errors.Is(err, optionalapi.ErrForbidden) || runCtx == nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(*runCtx, directReadTimeout)
	defer cancel()
	obj, getErr := get(ctx)
	switch {
	case apierrors.IsNotFound(getErr):
		return nil, nil
	case getErr != nil:
		return nil, fmt.Errorf("%w; reading it with a GET instead failed too: %w", err, getErr)
	}
	return trim(obj)
}
