// Package storagecache holds the informer caches of the storage.k8s.io/v1
// objects that provisioning and deletion read but that must never hold up
// the sidecar's start: VolumeAttributesClasses (served since Kubernetes
// 1.34) and VolumeAttachments (which the sidecar's RBAC may not allow it to
// list). Each runs on internal/shared/optionalapi: it starts once discovery says the
// API is served and reports, until its first list has been applied, why it
// cannot be read (not served, forbidden, not synced yet).
package storagecache

import (
	"context"
	"errors"
	"fmt"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/cachetrim"
	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
)

// Config is what the caches need.
type Config struct {
	// Client lists and watches the objects.
	Client kubernetes.Interface
	// Discovery finds out whether the API is served; Client.Discovery()
	// when nil.
	Discovery discovery.DiscoveryInterface
	// ResyncPeriod is the informers' resync period; zero disables resyncs.
	ResyncPeriod time.Duration
	// PollInterval is how often discovery is re-checked while the API is
	// not served; see optionalapi.DefaultPollInterval.
	PollInterval time.Duration
	// WatchList streams the informers' initial lists where the API server
	// supports it (see optionalapi.Config.WatchList); leave it off with
	// fake clientsets.
	WatchList bool
}

// AttributesClasses is the cache of VolumeAttributesClasses.
type AttributesClasses struct{ api *optionalapi.API }

// NewAttributesClasses returns the cache; nothing is read until Run.
func NewAttributesClasses(cfg Config) *AttributesClasses {
	return &AttributesClasses{api: newAPI(cfg, "VolumeAttributesClass", "volumeattributesclasses", &storagev1.VolumeAttributesClass{},
		func() *cache.ListWatch {
			classes := cfg.Client.StorageV1().VolumeAttributesClasses()
			return optionalapi.NewListWatch(classes.List, classes.Watch)
		}, nil)}
}

// Run reads VolumeAttributesClasses until ctx is done.
func (c *AttributesClasses) Run(ctx context.Context) { c.api.Run(ctx) }

// Settled is closed once Run has a first answer; see optionalapi.API.Settled.
func (c *AttributesClasses) Settled() <-chan struct{} { return c.api.Settled() }

// APIStatus reports whether the cache can be read, for the sidecar's
// availability gauges.
func (c *AttributesClasses) APIStatus() []optionalapi.Status {
	return []optionalapi.Status{c.api.Status()}
}

// Get returns the VolumeAttributesClass name. A class that does not exist
// is a NotFound error worded as the API server's; while the cache cannot be
// read, the error says why and wraps optionalapi.ErrNotServed,
// ErrForbidden or ErrNotSynced.
func (c *AttributesClasses) Get(name string) (*storagev1.VolumeAttributesClass, error) {
	inf, err := c.informer()
	if err != nil {
		return nil, err
	}
	obj, exists, err := inf.GetIndexer().GetByKey(name)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, apierrors.NewNotFound(storagev1.Resource("volumeattributesclasses"), name)
	}
	return obj.(*storagev1.VolumeAttributesClass), nil
}

func (c *AttributesClasses) informer() (cache.SharedIndexInformer, error) {
	inf, _, err := c.api.Informer()
	if errors.Is(err, optionalapi.ErrNotServed) {
		// optionalapi's wording is about CRDs; this API is built in.
		return nil, fmt.Errorf("cannot read VolumeAttributesClasses: the storage.k8s.io/v1 VolumeAttributesClass API is %w (Kubernetes before 1.34, or the API is disabled)", optionalapi.ErrNotServed)
	}
	return inf, err
}

// Attachments is the cache of VolumeAttachments, indexed by PV.
type Attachments struct{ api *optionalapi.API }

// byVolume indexes VolumeAttachments by the name of the PV they attach.
const byVolume = "byVolume"

// NewAttachments returns the cache; nothing is read until Run.
func NewAttachments(cfg Config) *Attachments {
	return &Attachments{api: newAPI(cfg, "VolumeAttachment", "volumeattachments", &storagev1.VolumeAttachment{},
		func() *cache.ListWatch {
			attachments := cfg.Client.StorageV1().VolumeAttachments()
			return optionalapi.NewListWatch(attachments.List, attachments.Watch)
		}, cache.Indexers{byVolume: indexByVolume})}
}

// Run reads VolumeAttachments until ctx is done.
func (a *Attachments) Run(ctx context.Context) { a.api.Run(ctx) }

// Settled is closed once Run has a first answer; see optionalapi.API.Settled.
func (a *Attachments) Settled() <-chan struct{} { return a.api.Settled() }

// APIStatus reports whether the cache can be read, for the sidecar's
// availability gauges.
func (a *Attachments) APIStatus() []optionalapi.Status { return []optionalapi.Status{a.api.Status()} }

// OfVolume returns the VolumeAttachments of the PV named pv. While the cache
// cannot be read, the error says why.
func (a *Attachments) OfVolume(pv string) ([]*storagev1.VolumeAttachment, error) {
	inf, _, err := a.api.Informer()
	if err != nil {
		return nil, err
	}
	objs, err := inf.GetIndexer().ByIndex(byVolume, pv)
	if err != nil {
		return nil, err
	}
	out := make([]*storagev1.VolumeAttachment, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*storagev1.VolumeAttachment))
	}
	return out, nil
}

func indexByVolume(obj any) ([]string, error) {
	va, ok := obj.(*storagev1.VolumeAttachment)
	if !ok || va.Spec.Source.PersistentVolumeName == nil {
		return nil, nil
	}
	return []string{*va.Spec.Source.PersistentVolumeName}, nil
}

// newAPI is the optional storage.k8s.io/v1 API of one resource.
func newAPI(cfg Config, name, resource string, object runtime.Object, listWatch func() *cache.ListWatch, indexers cache.Indexers) *optionalapi.API {
	disc := cfg.Discovery
	if disc == nil {
		disc = cfg.Client.Discovery()
	}
	return optionalapi.New(optionalapi.Config{
		Name:      name,
		Discovery: disc,
		Candidates: []optionalapi.Candidate{{GroupVersion: storagev1.SchemeGroupVersion, Resource: resource,
			Object: object, ListWatch: listWatch}},
		PollInterval: cfg.PollInterval,
		ResyncPeriod: cfg.ResyncPeriod,
		Indexers:     indexers,
		WatchList:    cfg.WatchList,
		Transform:    cachetrim.Meta,
	})
}
