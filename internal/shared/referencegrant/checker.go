package referencegrant

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	gatewayclientset "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gatewayscheme "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/scheme"

	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
)

// Config is what NewChecker needs.
type Config struct {
	// Client reads ReferenceGrants.
	Client gatewayclientset.Interface
	// Discovery finds which ReferenceGrant version is served; it defaults
	// to Client.Discovery().
	Discovery discovery.DiscoveryInterface
	// ResyncPeriod is the informer's resync period; zero disables resyncs.
	ResyncPeriod time.Duration
	// PollInterval is how often discovery is re-checked while no
	// ReferenceGrant version is served; see optionalapi.DefaultPollInterval.
	PollInterval time.Duration
	// OnChange, if set, is called with a grant's namespace whenever a grant
	// is added, updated or deleted, and with "" (meaning every namespace)
	// when the cache first syncs and whenever it becomes usable again after
	// a lost watch, so callers can re-queue the references the change may
	// decide. Grants present at start-up are
	// covered by that "" call, not by one call each.
	OnChange func(namespace string)
	// WatchList streams the cache's initial list; see
	// optionalapi.Config.WatchList.
	WatchList bool
}

// Checker decides references against the ReferenceGrants in an informer
// cache. It uses gateway.networking.k8s.io/v1 when served, v1beta1
// otherwise, and never blocks start-up when neither is served yet. It is
// safe for concurrent use.
type Checker struct {
	api      *optionalapi.API
	onChange func(namespace string)
}

// NewChecker returns a Checker for cfg. Nothing is read until Run is called.
func NewChecker(cfg Config) *Checker {
	disc := cfg.Discovery
	if disc == nil {
		disc = cfg.Client.Discovery()
	}
	c := &Checker{onChange: cfg.OnChange}
	c.api = optionalapi.New(optionalapi.Config{
		Name:      "ReferenceGrant",
		Discovery: disc,
		Candidates: []optionalapi.Candidate{
			{
				GroupVersion: schema.GroupVersion{Group: gatewayv1.GroupName, Version: "v1"},
				Resource:     "referencegrants",
				Object:       &gatewayv1.ReferenceGrant{},
				ListWatch: func() *cache.ListWatch {
					grants := cfg.Client.GatewayV1().ReferenceGrants(metav1.NamespaceAll)
					return optionalapi.NewListWatch(grants.List, grants.Watch)
				},
				ListStream: optionalapi.StreamLists(cfg.Client.GatewayV1().RESTClient(), "referencegrants", gatewayscheme.ParameterCodec),
			},
			{
				GroupVersion: schema.GroupVersion{Group: gatewayv1beta1.GroupName, Version: "v1beta1"},
				Resource:     "referencegrants",
				Object:       &gatewayv1beta1.ReferenceGrant{},
				ListWatch: func() *cache.ListWatch {
					grants := cfg.Client.GatewayV1beta1().ReferenceGrants(metav1.NamespaceAll)
					return optionalapi.NewListWatch(grants.List, grants.Watch)
				},
				ListStream: optionalapi.StreamLists(cfg.Client.GatewayV1beta1().RESTClient(), "referencegrants", gatewayscheme.ParameterCodec),
			},
		},
		PollInterval: cfg.PollInterval,
		ResyncPeriod: cfg.ResyncPeriod,
		Indexers:     indexers(),
		Transform:    toCached,
		Prepare:      c.prepare,
		OnSynced: func(optionalapi.Candidate) {
			c.changed("")
		},
		// A claim that waited while the grants synced is decided again
		// once they cannot be read either.
		OnRefused: func(optionalapi.Candidate) { c.changed("") },
		OnSettled: func(err error) {
			if err != nil {
				c.changed("")
			}
		},
		WatchList: cfg.WatchList,
	})
	return c
}

// Run reads ReferenceGrants until ctx is done; see optionalapi.API.Run.
// Check can be called before and while Run runs.
func (c *Checker) Run(ctx context.Context) {
	c.api.Run(ctx)
}

// Settled is closed once Run has a first answer; see optionalapi.API.Settled.
func (c *Checker) Settled() <-chan struct{} { return c.api.Settled() }

// APIStatus reports whether the ReferenceGrant cache can be read, for the
// sidecar's availability gauges.
func (c *Checker) APIStatus() []optionalapi.Status { return []optionalapi.Status{c.api.Status()} }

// Check decides ref from the cache. Until the cache can be used it returns a
// ReasonUnavailable decision whose message says why (CRD not installed, RBAC
// missing, not synced yet).
func (c *Checker) Check(ref Reference) Decision {
	inf, _, err := c.api.Informer()
	if err != nil {
		return unavailable(ref, err)
	}
	return check(inf.GetIndexer(), ref)
}

// check decides ref from the grants in indexer that name ref's target
// namespace, group and kind, whatever the number of other grants.
func check(indexer cache.Indexer, ref Reference) Decision {
	objs, err := indexer.ByIndex(targetIndex, targetKey(ref.ToNamespace, ref.ToGroup, ref.ToKind))
	if err != nil {
		return unavailable(ref, fmt.Errorf("reading the ReferenceGrant cache: %w", err))
	}
	var allowing *Grant
	for _, obj := range objs {
		if c, ok := obj.(*cachedGrant); ok {
			allowing = preferred(allowing, &c.Grant, ref)
		}
	}
	return decision(ref, allowing)
}

// prepare adds the change notifications to the informer before it runs.
func (c *Checker) prepare(_ optionalapi.Candidate, inf cache.SharedIndexInformer) error {
	if c.onChange == nil {
		return nil
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			if !isInInitialList { // The initial list is announced by OnChange("").
				c.changed(namespaceOf(obj))
			}
		},
		UpdateFunc: func(_, obj any) { c.changed(namespaceOf(obj)) },
		DeleteFunc: func(obj any) { c.changed(namespaceOf(obj)) },
	})
	if err != nil {
		return fmt.Errorf("adding the ReferenceGrant event handler: %w", err)
	}
	return nil
}

func (c *Checker) changed(namespace string) {
	if c.onChange != nil {
		c.onChange(namespace)
	}
}

// namespaceOf returns the namespace of a cached grant or of a deleted grant
// whose final state is unknown.
func namespaceOf(obj any) string {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		namespace, _, _ := cache.SplitMetaNamespaceKey(tombstone.Key)
		return namespace
	}
	if c, ok := obj.(*cachedGrant); ok {
		return c.Grant.Namespace
	}
	return ""
}
