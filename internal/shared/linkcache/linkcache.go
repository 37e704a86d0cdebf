// Package linkcache keeps VolumeSnapshotLinks (KEP-3294's alternative to a
// namespaced data source) in an informer cache that starts whenever their
// CRD is served, so the sidecar starts without it and restores through
// links as soon as it is installed.
//
// Besides reading a link by name, the cache answers the two questions the
// event wiring asks: which links name a snapshot (a snapshot changed: the
// claims of those links may be provisioned now; a snapshot is released:
// do the claims of those links still use it?), and which links name a
// snapshot in a namespace (a ReferenceGrant there changed).
package linkcache

import (
	"context"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/cachetrim"
	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
	linkscheme "github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned/scheme"
)

// The cache's indexes.
const (
	// byTarget indexes a link under "<namespace>/<name>" of its snapshot.
	byTarget = "target"
	// byTargetNamespace indexes a link that crosses namespaces under its
	// snapshot's namespace: the namespace whose grants decide it.
	byTargetNamespace = "target-namespace"
)

// Config holds what the cache needs.
type Config struct {
	// Client lists and watches VolumeSnapshotLinks.
	Client versioned.Interface
	// Discovery tells whether the VolumeSnapshotLink CRD is served.
	Discovery discovery.DiscoveryInterface
	// ResyncPeriod of the informer; PollInterval of discovery while absent.
	ResyncPeriod, PollInterval time.Duration
	// OnSynced, if set, is called when the cache has synced, and again
	// whenever it can be read after a lost watch.
	OnSynced func()
	// OnUnreadable, if set, is called when the cache turns out not to be
	// readable: its first answer is that the CRD is not served or the
	// list is refused, or a later list or watch is refused. Work that
	// waited for the cache to sync is decided again from it.
	OnUnreadable func()
	// WatchList streams the cache's initial list; see
	// optionalapi.Config.WatchList.
	WatchList bool
}

// Cache reads VolumeSnapshotLinks from the informer cache.
type Cache struct {
	api      *optionalapi.API
	handlers []cache.ResourceEventHandler
	// registrations are the handlers' on the current informer.
	registrations atomic.Pointer[[]cache.ResourceEventHandlerRegistration]
}

// New returns a Cache; nothing is watched until Run.
func New(cfg Config) *Cache {
	c := &Cache{}
	c.api = optionalapi.New(optionalapi.Config{
		Name: snapv1alpha1.Kind, Discovery: cfg.Discovery, PollInterval: cfg.PollInterval, ResyncPeriod: cfg.ResyncPeriod,
		WatchList: cfg.WatchList, Indexers: cache.Indexers{byTarget: indexByTarget, byTargetNamespace: indexByTargetNamespace},
		Candidates: []optionalapi.Candidate{{GroupVersion: snapv1alpha1.SchemeGroupVersion, Resource: "volumesnapshotlinks",
			Object: &snapv1alpha1.VolumeSnapshotLink{},
			ListWatch: func() *cache.ListWatch {
				links := cfg.Client.SnapshotV1alpha1().VolumeSnapshotLinks(metav1.NamespaceAll)
				return optionalapi.NewListWatch(links.List, links.Watch)
			},
			ListStream: optionalapi.StreamLists(cfg.Client.SnapshotV1alpha1().RESTClient(), "volumesnapshotlinks", linkscheme.ParameterCodec)}},
		Transform: cachetrim.Meta,
		Prepare: func(_ optionalapi.Candidate, inf cache.SharedIndexInformer) error {
			regs := make([]cache.ResourceEventHandlerRegistration, 0, len(c.handlers))
			for _, h := range c.handlers {
				reg, err := inf.AddEventHandler(h)
				if err != nil {
					return err
				}
				regs = append(regs, reg)
			}
			c.registrations.Store(&regs)
			return nil
		},
		OnSynced: func(optionalapi.Candidate) {
			if cfg.OnSynced != nil {
				cfg.OnSynced()
			}
		},
		OnRefused: func(optionalapi.Candidate) {
			if cfg.OnUnreadable != nil {
				cfg.OnUnreadable()
			}
		},
		OnSettled: func(err error) {
			if err != nil && cfg.OnUnreadable != nil {
				cfg.OnUnreadable()
			}
		},
	})
	return c
}

// AddHandler adds h to the link informer. Call before Run.
func (c *Cache) AddHandler(h cache.ResourceEventHandler) { c.handlers = append(c.handlers, h) }

// Run runs the cache until ctx is done. It never waits for it to sync.
func (c *Cache) Run(ctx context.Context) { c.api.Run(ctx) }

// Settled is closed once Run has a first answer; see optionalapi.API.Settled.
func (c *Cache) Settled() <-chan struct{} { return c.api.Settled() }

// APIStatus reports whether the VolumeSnapshotLink cache can be read, for
// the sidecar's availability gauges.
func (c *Cache) APIStatus() []optionalapi.Status { return []optionalapi.Status{c.api.Status()} }

// HandlersSynced reports whether the handlers have been handed the initial
// list of the current informer: false before the first informer, and again
// while an informer that replaced a refused or unserved one lists.
func (c *Cache) HandlersSynced() bool {
	regs := c.registrations.Load()
	if regs == nil {
		return false
	}
	for _, reg := range *regs {
		if !reg.HasSynced() {
			return false
		}
	}
	return true
}

// GetLink returns the cached link, (nil, nil) when it does not exist, or an
// error saying why the cache cannot be read.
func (c *Cache) GetLink(namespace, name string) (*snapv1alpha1.VolumeSnapshotLink, error) {
	inf, _, err := c.api.Informer()
	if err != nil {
		return nil, err
	}
	obj, exists, err := inf.GetIndexer().GetByKey(namespace + "/" + name)
	if err != nil || !exists {
		return nil, err
	}
	return obj.(*snapv1alpha1.VolumeSnapshotLink), nil
}

// List returns every cached link.
func (c *Cache) List() ([]*snapv1alpha1.VolumeSnapshotLink, error) {
	inf, _, err := c.api.Informer()
	if err != nil {
		return nil, err
	}
	objs := inf.GetIndexer().List()
	links := make([]*snapv1alpha1.VolumeSnapshotLink, 0, len(objs))
	for _, o := range objs {
		links = append(links, o.(*snapv1alpha1.VolumeSnapshotLink))
	}
	return links, nil
}

// LinksTo returns the links that name the VolumeSnapshot namespace/name.
func (c *Cache) LinksTo(namespace, name string) ([]*snapv1alpha1.VolumeSnapshotLink, error) {
	return c.byIndex(byTarget, namespace+"/"+name)
}

// LinksInto returns the links in other namespaces that name a
// VolumeSnapshot in namespace: those a ReferenceGrant there decides.
func (c *Cache) LinksInto(namespace string) ([]*snapv1alpha1.VolumeSnapshotLink, error) {
	return c.byIndex(byTargetNamespace, namespace)
}

func (c *Cache) byIndex(index, key string) ([]*snapv1alpha1.VolumeSnapshotLink, error) {
	inf, _, err := c.api.Informer()
	if err != nil {
		return nil, err
	}
	objs, err := inf.GetIndexer().ByIndex(index, key)
	if err != nil {
		return nil, err
	}
	links := make([]*snapv1alpha1.VolumeSnapshotLink, 0, len(objs))
	for _, o := range objs {
		links = append(links, o.(*snapv1alpha1.VolumeSnapshotLink))
	}
	return links, nil
}

func indexByTarget(obj any) ([]string, error) {
	link, ok := obj.(*snapv1alpha1.VolumeSnapshotLink)
	if !ok {
		return nil, nil
	}
	return []string{link.SourceNamespace() + "/" + link.Spec.Source.Name}, nil
}

func indexByTargetNamespace(obj any) ([]string, error) {
	link, ok := obj.(*snapv1alpha1.VolumeSnapshotLink)
	if !ok || link.SourceNamespace() == link.Namespace {
		return nil, nil
	}
	return []string{link.SourceNamespace()}, nil
}
