package validator

import (
	"context"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/cachetrim"
	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
	popv1beta1 "github.com/xns-csi/csi-provisioner/pkg/apis/populator/v1beta1"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
)

// byKind indexes a VolumePopulator under kindKey of its sourceKind.
const byKind = "kind"

// kindKey is the index key of a data source kind.
func kindKey(group, kind string) string { return group + "/" + kind }

// populatorsConfig is what newPopulators needs.
type populatorsConfig struct {
	Client    versioned.Interface
	Discovery discovery.DiscoveryInterface
	// ResyncPeriod of the informer; PollInterval of discovery while the
	// CRD is not served.
	ResyncPeriod, PollInterval time.Duration
	// OnChange is called with the kinds a VolumePopulator registered before
	// and after a change (both, when an update changed its sourceKind).
	OnChange func(group, kind string)
	// OnSynced is called when the cache has synced, and again whenever it
	// can be read after a lost watch.
	OnSynced func()
	// WatchList streams the cache's initial list.
	WatchList bool
}

// populators keeps the VolumePopulators in an informer cache that starts
// whenever their CRD is served (optionalapi), so the validator runs, and
// decides everything but populator kinds, without it.
type populators struct {
	api *optionalapi.API
}

func newPopulators(cfg populatorsConfig) *populators {
	changed := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if p, ok := obj.(*popv1beta1.VolumePopulator); ok && cfg.OnChange != nil {
			cfg.OnChange(p.SourceKind.Group, p.SourceKind.Kind)
		}
	}
	api := optionalapi.New(optionalapi.Config{
		Name: popv1beta1.Kind, Discovery: cfg.Discovery, PollInterval: cfg.PollInterval, ResyncPeriod: cfg.ResyncPeriod,
		WatchList: cfg.WatchList, Indexers: cache.Indexers{byKind: indexByKind},
		Candidates: []optionalapi.Candidate{{GroupVersion: popv1beta1.SchemeGroupVersion, Resource: "volumepopulators",
			Object: &popv1beta1.VolumePopulator{},
			ListWatch: func() *cache.ListWatch {
				list := cfg.Client.PopulatorV1beta1().VolumePopulators()
				return optionalapi.NewListWatch(list.List, list.Watch)
			}}},
		Transform: cachetrim.Meta,
		Prepare: func(_ optionalapi.Candidate, inf cache.SharedIndexInformer) error {
			_, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
				AddFunc: func(obj any, isInInitialList bool) {
					if !isInInitialList { // the initial list is announced by OnSynced
						changed(obj)
					}
				},
				UpdateFunc: func(oldObj, newObj any) {
					changed(oldObj)
					changed(newObj)
				},
				DeleteFunc: changed,
			})
			return err
		},
		OnSynced: func(optionalapi.Candidate) {
			if cfg.OnSynced != nil {
				cfg.OnSynced()
			}
		},
	})
	return &populators{api: api}
}

// Run runs the cache until ctx is done. It never waits for it to sync.
func (p *populators) Run(ctx context.Context) { p.api.Run(ctx) }

// Registered reports whether a VolumePopulator registers group and kind;
// the error says why the VolumePopulators cannot be read.
func (p *populators) Registered(group, kind string) (bool, error) {
	inf, _, err := p.api.Informer()
	if err != nil {
		return false, err
	}
	objs, err := inf.GetIndexer().ByIndex(byKind, kindKey(group, kind))
	return len(objs) > 0, err
}

// APIStatus reports whether the VolumePopulators can be read, for the
// availability gauges.
func (p *populators) APIStatus() []optionalapi.Status { return []optionalapi.Status{p.api.Status()} }

// Err says why the VolumePopulators cannot be read; nil once they can.
func (p *populators) Err() error {
	_, _, err := p.api.Informer()
	return err
}

func indexByKind(obj any) ([]string, error) {
	p, ok := obj.(*popv1beta1.VolumePopulator)
	if !ok {
		return nil, nil
	}
	return []string{kindKey(p.SourceKind.Group, p.SourceKind.Kind)}, nil
}
