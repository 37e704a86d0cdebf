package validator

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	gatewayclientset "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/xns-csi/csi-provisioner/internal/shared/cachetrim"
	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/linkcache"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	"github.com/xns-csi/csi-provisioner/internal/shared/requeue"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
)

// byPopulatorKind indexes a pending claim whose source is a volume
// populator's kind under kindKey of that kind.
const byPopulatorKind = "populator-kind"

// Config is what New needs.
type Config struct {
	// Kube lists and watches claims.
	Kube kubernetes.Interface
	// Events writes the events on claims, with a client of their own (its
	// rate limiter paces a burst of them); see notices.
	Events typedcorev1.EventsGetter
	// Gateway reads ReferenceGrants; API reads VolumePopulators and
	// VolumeSnapshotLinks (pkg/generated).
	Gateway gatewayclientset.Interface
	API     versioned.Interface
	// GatewayDiscovery and APIDiscovery tell whether the optional APIs are
	// served; the clients' own when nil.
	GatewayDiscovery, APIDiscovery discovery.DiscoveryInterface
	// ResyncPeriod of the informers; PollInterval of discovery while an
	// optional API is not served (optionalapi.DefaultPollInterval if 0).
	ResyncPeriod, PollInterval time.Duration
	// CrossNamespace and SnapshotLinks are the settings of the sidecars
	// whose decisions the validator reports: the
	// CrossNamespaceSourceProvisioning gate and --cross-namespace-snapshot.
	CrossNamespace, SnapshotLinks bool
	// Metrics counts the events, and takes the state gauges while Run
	// runs; none when nil.
	Metrics *Metrics
	// Clock is the clock of the state gauges' ages; the real clock when
	// nil.
	Clock clock.PassiveClock
	// WatchList streams the initial lists of the ReferenceGrant,
	// VolumePopulator and VolumeSnapshotLink caches (the claims' informer
	// streams by itself), so that a first sync holds trimmed objects only
	// (optionalapi.Config.WatchList). Run sets it; the fake clientsets of
	// tests cannot stream.
	WatchList bool
}

// Controller decides every claim when it changes, and again when a
// VolumePopulator, ReferenceGrant or VolumeSnapshotLink it depends on
// changes or its cache becomes readable, and tells the claim once per
// state.
type Controller struct {
	factory    informers.SharedInformerFactory
	claims     *requeue.Claims
	queue      workqueue.TypedRateLimitingInterface[string]
	populators *populators
	grants     *referencegrant.Checker
	links      *linkcache.Cache // nil unless SnapshotLinks
	gatherer   gatherer
	notices    *notices
	metrics    *Metrics
	clock      clock.PassiveClock
	// synced is set once the claim cache has synced and workers run.
	synced atomic.Bool
	// decided, if set, is told every decision once it is acted on (tests).
	decided func(claim *v1.PersistentVolumeClaim, out Outcome)
}

// New wires the controller; nothing runs until Run.
func New(cfg Config) (*Controller, error) {
	if cfg.GatewayDiscovery == nil {
		cfg.GatewayDiscovery = cfg.Gateway.Discovery()
	}
	if cfg.APIDiscovery == nil {
		cfg.APIDiscovery = cfg.API.Discovery()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	c := &Controller{
		metrics: cfg.Metrics,
		clock:   cfg.Clock,
		factory: informers.NewSharedInformerFactoryWithOptions(cfg.Kube, cfg.ResyncPeriod, informers.WithTransform(cachetrim.ClaimSource)),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "claims"}),
		notices: newNotices(cfg.Events, cfg.Metrics, cfg.Clock),
	}
	inf := c.factory.InformerFor(&v1.PersistentVolumeClaim{}, newClaimInformer)
	if err := inf.AddIndexers(cache.Indexers{byPopulatorKind: populatorKindIndex(cfg.SnapshotLinks)}); err != nil {
		return nil, err
	}
	claims, err := requeue.NewClaims(inf)
	if err != nil {
		return nil, err
	}
	c.claims = claims
	c.grants = referencegrant.NewChecker(referencegrant.Config{Client: cfg.Gateway, Discovery: cfg.GatewayDiscovery,
		ResyncPeriod: cfg.ResyncPeriod, PollInterval: cfg.PollInterval, OnChange: func(namespace string) { claims.GrantsChanged(namespace) },
		WatchList: cfg.WatchList})
	c.populators = newPopulators(populatorsConfig{Client: cfg.API, Discovery: cfg.APIDiscovery, ResyncPeriod: cfg.ResyncPeriod,
		PollInterval: cfg.PollInterval, OnChange: c.requeueKind, OnSynced: c.requeueAllKinds, WatchList: cfg.WatchList})
	policy := claimsource.Policy{CrossNamespace: cfg.CrossNamespace, Grants: c.grants, SnapshotLinks: cfg.SnapshotLinks}
	c.gatherer = gatherer{populators: c.populators, grants: c.grants}
	if cfg.SnapshotLinks {
		c.links = linkcache.New(linkcache.Config{Client: cfg.API, Discovery: cfg.APIDiscovery, ResyncPeriod: cfg.ResyncPeriod,
			PollInterval: cfg.PollInterval, OnSynced: func() { claims.LinksSynced() }, OnUnreadable: func() { claims.LinksSynced() },
			WatchList: cfg.WatchList})
		claims.SetLinks(c.links)
		c.links.AddHandler(claims.LinkHandler())
		policy.Links, c.gatherer.links = c.links, c.links
	}
	c.gatherer.policy = policy
	_, err = claims.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: c.deleted,
	})
	return c, err
}

// newClaimInformer is the factory's claim informer without its namespace
// index: nothing here lists claims by namespace, and the index would hold
// a key for every claim.
func newClaimInformer(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
	return coreinformers.NewPersistentVolumeClaimInformer(client, metav1.NamespaceAll, resync, cache.Indexers{})
}

// Run runs the caches and workers until ctx is done, and exports the
// state gauges meanwhile: under leader election, only the leader runs
// caches and exports them. The optional caches never hold up the start;
// the claim cache does.
func (c *Controller) Run(ctx context.Context, workers int) {
	logger := klog.FromContext(ctx)
	if unexport, err := c.exportState(); err != nil {
		logger.Error(err, "Cannot export the state gauges")
	} else {
		defer unexport()
	}
	// Deferred in reverse: the queue shuts down, so the workers return;
	// then every goroutine has; then the informers stop.
	defer c.factory.Shutdown()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.queue.ShutDown()
	c.factory.Start(ctx.Done())
	for _, run := range c.runners() {
		wg.Go(func() { run(ctx) })
	}
	if !cache.WaitForCacheSync(ctx.Done(), c.claims.HasSynced) {
		return
	}
	c.synced.Store(true)
	logger.Info("Claim cache synced, validating data sources", "workers", workers, "optionalAPIs", c.describeOptionalAPIs())
	for range workers {
		wg.Go(func() {
			for c.processNextItem(ctx) {
			}
		})
	}
	<-ctx.Done()
}

// runners are the Run functions of the optional caches.
func (c *Controller) runners() []func(context.Context) {
	runners := []func(context.Context){c.populators.Run, c.grants.Run}
	if c.links != nil {
		runners = append(runners, c.links.Run)
	}
	return runners
}

// processNextItem decides the next queued claim; false once the queue shut
// down. A claim whose event could not be written is decided again after
// the queue's backoff.
func (c *Controller) processNextItem(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx, key); err != nil {
		namespace, name, _ := cache.SplitMetaNamespaceKey(key)
		klog.FromContext(ctx).Error(err, "Cannot tell the claim; deciding it again after a backoff", "pvc", klog.KRef(namespace, name))
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// sync decides the claim with key and acts on the outcome. A decision
// reads caches only and cannot fail: a claim waiting for a cache is
// re-queued by that cache's sync, not retried. The error is the event's
// write's.
func (c *Controller) sync(ctx context.Context, key string) error {
	obj, exists, err := c.claims.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return nil
	}
	claim := obj.(*v1.PersistentVolumeClaim)
	out := Decide(c.gatherer.gather(claim))
	klog.FromContext(ctx).V(4).Info("Decided", "pvc", klog.KObj(claim), "action", out.Action, "reason", out.Reason)
	switch out.Action {
	case Quiet:
		c.notices.forget(claim.UID)
	case Warn:
		if err := c.notices.tell(ctx, claim, out); err != nil {
			return err
		}
		if !c.cached(key, claim.UID) {
			// Deleted while its event was written: deleted may have
			// forgotten it before tell remembered it.
			c.notices.forget(claim.UID)
		}
	case Wait:
	}
	if c.decided != nil {
		c.decided(claim, out)
	}
	return nil
}

// cached reports whether the claim with key and uid is in the cache.
func (c *Controller) cached(key string, uid types.UID) bool {
	obj, exists, err := c.claims.GetIndexer().GetByKey(key)
	claim, ok := obj.(*v1.PersistentVolumeClaim)
	return err == nil && exists && ok && claim.UID == uid
}

func (c *Controller) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

// deleted forgets what a deleted claim was told.
func (c *Controller) deleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if claim, ok := obj.(*v1.PersistentVolumeClaim); ok {
		c.notices.forget(claim.UID)
	}
}

// requeueKind re-queues the pending claims of a populator kind: a
// VolumePopulator registering it appeared, changed or went.
func (c *Controller) requeueKind(group, kind string) { c.requeueIndexed(kindKey(group, kind)) }

// requeueAllKinds re-queues the pending claims of every populator kind:
// the VolumePopulator cache just became readable.
func (c *Controller) requeueAllKinds() {
	for _, key := range c.claims.GetIndexer().ListIndexFuncValues(byPopulatorKind) {
		c.requeueIndexed(key)
	}
}

// requeueIndexed re-queues the claims under key of byPopulatorKind.
func (c *Controller) requeueIndexed(key string) {
	objs, err := c.claims.GetIndexer().ByIndex(byPopulatorKind, key)
	if err != nil {
		return
	}
	for _, obj := range objs {
		c.enqueue(obj)
	}
}

// populatorKindIndex indexes pending claims whose source is a volume
// populator's kind; VolumeSnapshotLinks are one unless the validator
// restores through them (snapshotLinks), as in claimsource.Admit.
func populatorKindIndex(snapshotLinks bool) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		claim, ok := obj.(*v1.PersistentVolumeClaim)
		if !ok || claim.Spec.VolumeName != "" {
			return nil, nil
		}
		src, err := datasource.Resolve(claim)
		if err != nil {
			return nil, nil
		}
		if t := src.Type(); t == datasource.Populator || (t == datasource.Link && !snapshotLinks) {
			return []string{kindKey(src.APIGroup, src.Kind)}, nil
		}
		return nil, nil
	}
}
