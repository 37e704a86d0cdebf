package sidecar

import (
	"cmp"
	"context"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	gatewayclientset "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
	libmetrics "sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller/metrics"

	"github.com/xns-csi/csi-provisioner/internal/shared/cachetrim"
	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/features"
	"github.com/xns-csi/csi-provisioner/internal/shared/linkcache"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	"github.com/xns-csi/csi-provisioner/internal/shared/requeue"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/capacity"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/deletionorder"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/fanout"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/inflight"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/linkstatus"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/metrics"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/provisioner"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/snapshotcache"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/sourceprotection"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/storagecache"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
	linkclientset "github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
)

// buildConfig is what build needs.
type buildConfig struct {
	opts      *Options
	rest      *rest.Config
	kube      kubernetes.Interface
	events    kubernetes.Interface    // writes events; kube when nil (tests)
	snapshots snapclientset.Interface // built from rest when nil
	gateway   gatewayclientset.Interface
	links     linkclientset.Interface // built from rest when nil and --cross-namespace-snapshot is set
	// snapshotDiscovery, gatewayDiscovery and linkDiscovery default to the
	// clients' own; pollInterval to optionalAPIPollInterval. Tests
	// override them.
	snapshotDiscovery, gatewayDiscovery, linkDiscovery discovery.DiscoveryInterface
	pollInterval                                       time.Duration
	driver                                             csiDriver
	identity                                           driverIdentity
	metrics                                            *metrics.Metrics
	provisionMetrics                                   *libmetrics.Metrics
	// capacityKube writes CSIStorageCapacity objects (--enable-capacity),
	// with the --kube-api-capacity-* rate limit; registerer gets the
	// capacity controller's metrics and the state gauges (none when nil).
	capacityKube kubernetes.Interface
	registerer   prometheus.Registerer
	// kubeDiscovery finds out whether the optional storage.k8s.io/v1 APIs
	// are served; kube's own when nil.
	kubeDiscovery discovery.DiscoveryInterface
	// sourceLinger is how long an unused source keeps its finalizer;
	// sourceProtectionLinger when 0. Tests shorten it.
	sourceLinger time.Duration
}

// sourceProtectionLinger is how long a snapshot or claim keeps its
// protection finalizer after its last restore or clone ended, unless its
// deletion is requested: restores of one source that follow each other
// within it cost no write to the source.
const sourceProtectionLinger = 5 * time.Second

// informerSet are the core informers the sidecar shares. Those of Nodes and
// CSINodes are added by their users (topologyListers, newCapacity), so that
// a sidecar of --node-deployment watches none.
type informerSet struct {
	factory informers.SharedInformerFactory
	claims  cache.SharedIndexInformer
	volumes cache.SharedIndexInformer
	classes cache.SharedIndexInformer
}

// watchList would let the optional APIs' informers (snapshots, contents,
// grants, links, VolumeAttributesClasses, VolumeAttachments) stream their
// initial lists. They list instead, each object trimmed as it is decoded
// (optionalapi.Config.Transform and Candidate.ListStream): the memory of a
// first sync is bounded as with a stream, and at 50,000 snapshots and
// grants the list costs the sidecar and the API server a third less CPU
// than a stream, which the API server spends deep-copying and framing
// every object on its own, and the client decoding each several times
// (docs/benchmarks.md). The core informers stream theirs (client-go's
// default); the unit tests' fake clientsets cannot, and turn client-go's
// WatchListClient gate off (main_test.go).
const watchList = false

func newInformerSet(kube kubernetes.Interface, opts *Options, driver string) *informerSet {
	factory := informers.NewSharedInformerFactoryWithOptions(kube, opts.ResyncPeriod, informers.WithTransform(cachetrim.Core(driver)))
	return &informerSet{
		factory: factory,
		claims:  factory.Core().V1().PersistentVolumeClaims().Informer(),
		volumes: factory.Core().V1().PersistentVolumes().Informer(),
		classes: factory.Storage().V1().StorageClasses().Informer(),
	}
}

// build wires every component and returns the function that runs them (as
// leader) and the readiness handler. Each step below adds one layer to
// what the steps before it made: the caches, the policy that decides which
// sources a claim may use, the source protection, the provisioner, the
// event wiring between them, and the library's controller.
func build(ctx context.Context, cfg buildConfig) (func(context.Context), *readiness, error) {
	if err := cfg.complete(); err != nil {
		return nil, nil, err
	}
	w := &wiring{cfg: cfg, opts: cfg.opts, informers: newInformerSet(cfg.kube, cfg.opts, cfg.identity.name)}
	if err := w.caches(); err != nil {
		return nil, nil, err
	}
	w.sourcePolicy()
	w.sourceProtection()
	w.newProvisioner(ctx)
	if err := w.wireEvents(); err != nil {
		return nil, nil, err
	}
	if err := w.newController(ctx); err != nil {
		return nil, nil, err
	}
	ready := &readiness{}
	return func(ctx context.Context) { w.run(ctx, ready) }, ready, nil
}

// complete builds the clients and discovery a test did not set.
func (cfg *buildConfig) complete() error {
	var err error
	if cfg.snapshots == nil {
		if cfg.snapshots, err = snapclientset.NewForConfig(cfg.rest); err != nil {
			return err
		}
	}
	if cfg.gateway == nil {
		if cfg.gateway, err = gatewayclientset.NewForConfig(cfg.rest); err != nil {
			return err
		}
	}
	if cfg.snapshotDiscovery == nil {
		cfg.snapshotDiscovery = cfg.snapshots.Discovery()
	}
	if cfg.gatewayDiscovery == nil {
		cfg.gatewayDiscovery = cfg.gateway.Discovery()
	}
	if cfg.kubeDiscovery == nil {
		cfg.kubeDiscovery = cfg.kube.Discovery()
	}
	cfg.pollInterval = cmp.Or(cfg.pollInterval, optionalAPIPollInterval)
	if cfg.events == nil {
		cfg.events = cfg.kube
	}
	return nil
}

// wiring holds the sidecar's components while build wires them, and runs
// them.
type wiring struct {
	cfg       buildConfig
	opts      *Options
	informers *informerSet
	claims    *requeue.Claims
	snapshots *snapshotcache.Cache
	grants    *referencegrant.Checker
	links     *linkcache.Cache // nil without --cross-namespace-snapshot
	// order orders claims against their source's deletion request within
	// the second the API's timestamps share (package deletionorder).
	order      *deletionorder.Log
	policy     claimsource.Policy
	protection sourceprotection.Config
	// protector and linkStatus are told about grant and snapshot cache
	// changes, and decide with those caches' answers: they are set before
	// anything runs.
	protector  *sourceprotection.Protector
	linkStatus *linkstatus.Controller // nil without links
	attempts   *inflight.Registry
	storage    storageCaches
	prov       *provisioner.Provisioner
	settle     *settler
	capacities *capacity.Controller // nil without --enable-capacity
	state      prometheus.Collector
	controller *controller.ProvisionController
}

// caches makes the claims' requeue index and the optional APIs' caches.
func (w *wiring) caches() error {
	var err error
	if w.claims, err = requeue.NewClaims(w.informers.claims); err != nil {
		return err
	}
	cfg, opts := &w.cfg, w.opts
	w.snapshots = snapshotcache.New(snapshotcache.Config{Client: cfg.snapshots, Discovery: cfg.snapshotDiscovery,
		ResyncPeriod: opts.ResyncPeriod, PollInterval: cfg.pollInterval, WatchList: watchList, OnSynced: func() {
			w.claims.SnapshotsSynced()
			if w.linkStatus != nil {
				w.linkStatus.Resync()
			}
		}})
	w.grants = referencegrant.NewChecker(referencegrant.Config{Client: cfg.gateway, Discovery: cfg.gatewayDiscovery,
		ResyncPeriod: opts.ResyncPeriod, PollInterval: cfg.pollInterval, WatchList: watchList,
		OnChange: func(namespace string) {
			w.claims.GrantsChanged(namespace)
			w.protector.GrantsChanged(namespace)
			if w.linkStatus != nil {
				w.linkStatus.GrantsChanged(namespace)
			}
		}})
	if w.links, err = newLinks(cfg, w.claims, func() { w.protector.LinksSynced() }); err != nil {
		return err
	}
	w.storage = newStorageCaches(*cfg)
	return nil
}

// sourcePolicy decides which sources a claim may use.
func (w *wiring) sourcePolicy() {
	factory, identity := w.informers.factory, w.cfg.identity
	w.order = deletionorder.New(nil)
	w.policy = claimsource.Policy{CrossNamespace: features.CrossNamespaceEnabled(w.opts.FeatureGate), Grants: w.grants,
		SnapshotLinks: w.links != nil,
		Driver: claimsource.Driver{Name: identity.name, RestoresSnapshots: identity.caps.SupportsSnapshotRestore(),
			Clones: identity.caps.SupportsClone(), PreventVolumeModeConversion: w.opts.Volume.PreventVolumeModeConversion},
		Snapshots: w.snapshots, Claims: factory.Core().V1().PersistentVolumeClaims().Lister(),
		Volumes: factory.Core().V1().PersistentVolumes().Lister(), Order: w.order}
	if w.links != nil {
		w.policy.Links = w.links
	}
}

// sourceProtection makes the protector of the sources in use, and the link
// statuses, which answer from the same caches.
func (w *wiring) sourceProtection() {
	// The sidecar that holds a source in use, for the marks of its calls in
	// flight: with --node-deployment, one per driver and node. Without it,
	// one sidecar of the driver (the leader) provides and protects, and no
	// other process uses the sources it protects (another driver's sidecar
	// cannot restore or clone them): it marks nothing.
	var holder string
	if w.cfg.identity.node != nil {
		holder = w.cfg.identity.name + "/" + w.cfg.identity.node.Name
	}
	f := w.informers
	w.protection = sourceprotection.Config{Client: w.cfg.kube, SnapshotClient: w.cfg.snapshots,
		Snapshots: w.snapshots, Claims: f.claims.GetIndexer(), Volumes: f.factory.Core().V1().PersistentVolumes().Lister(),
		VolumeName: claimVolumeName, InFlight: inflight.New(), Synced: []cache.InformerSynced{f.claims.HasSynced, f.volumes.HasSynced},
		Linger: cmp.Or(w.cfg.sourceLinger, sourceProtectionLinger), Holder: holder, SnapshotList: w.snapshots,
		Policy: w.policy}
	if w.links != nil {
		w.protection.Links = w.links
		w.linkStatus = linkstatus.New(linkstatus.Config{Client: w.cfg.links, Links: w.links, Snapshots: w.snapshots, Grants: w.grants})
		w.links.AddHandler(w.linkStatus.LinkHandler())
		w.links.AddHandler(w.order.LinkHandler()) // a restore through a link is as new as the link
		w.order.Delivering(&snapv1alpha1.VolumeSnapshotLink{}, w.links.HandlersSynced)
		w.snapshots.AddSnapshotHandler(w.linkStatus.SnapshotHandler())
	}
	w.attempts = w.protection.InFlight
	w.protector = sourceprotection.New(w.protection)
	w.attempts.OnEnd(w.protector.Recheck)
}

// claimVolumeName is the name of the PV provisioned for a claim.
func claimVolumeName(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }

// newProvisioner makes the provisioner the library's controller calls.
func (w *wiring) newProvisioner(ctx context.Context) {
	cfg, factory := w.cfg, w.informers.factory
	nodes, csiNodes := topologyListers(cfg, factory)
	w.prov = provisioner.New(provisioner.Config{
		DriverName:   cfg.identity.name,
		Identity:     provisionerIdentity(provisioner.Identity(time.Now(), rand.IntN(10000), cfg.identity.name), cfg.identity.node),
		Capabilities: cfg.identity.caps, Driver: cfg.driver, Client: cfg.kube,
		Claims: factory.Core().V1().PersistentVolumeClaims().Lister(), Volumes: factory.Core().V1().PersistentVolumes().Lister(),
		Nodes: nodes, CSINodes: csiNodes,
		Classes: factory.Storage().V1().StorageClasses().Lister(), AttributesClasses: w.storage.attributesClassGetter(),
		Attachments: w.storage.attachmentLister(), Policy: w.policy,
		Protector: w.protector, InFlight: w.attempts, Recorder: newRecorder(ctx, cfg.events, cfg.identity.name),
		Metrics: cfg.metrics, Options: w.opts.Volume, RequeueAfter: w.claims.RequeueAfter,
	})
	w.settle = newSettler(w.prov.Settle, w.attempts, w.opts)
}

// wireEvents: waiting claims are re-queued by what they wait for, and
// source finalizers are released when their claims are done.
func (w *wiring) wireEvents() error {
	// The handlers that never wait share a registration (see fanout); the
	// protector's handlers of claims and snapshots wait for a write of a
	// deleted source in progress, and keep their own. The deletion order
	// sees each claim and snapshot first: a claim created while the others
	// handle a snapshot's deletion must find that deletion in the log.
	w.snapshots.AddSnapshotHandler(fanout.Handlers{w.order.SourceHandler(), w.claims.SnapshotHandler()})
	w.snapshots.AddSnapshotHandler(w.protector.SnapshotHandler())
	w.snapshots.AddContentHandler(w.claims.ContentHandler())
	f := w.informers
	claimsSeen, err := f.claims.AddEventHandler(fanout.Handlers{w.order.ClaimHandler(), w.claims.CloneSourceHandler(),
		forgetDone(w.prov), w.settle.ClaimHandler()})
	if err != nil {
		return err
	}
	w.order.Delivering(&v1.PersistentVolumeClaim{}, claimsSeen.HasSynced)
	if _, err := f.claims.AddEventHandler(w.protector.ClaimHandler()); err != nil {
		return err
	}
	_, err = f.volumes.AddEventHandler(fanout.Handlers{w.claims.CloneSourceVolumeHandler(), w.protector.VolumeHandler(), volumesSaved(w.prov)})
	return err
}

// newController makes the library's controller around the provisioner,
// with the node deployment's and capacity tracking's hooks, and the state
// gauges.
func (w *wiring) newController(ctx context.Context) error {
	cfg, opts := w.cfg, w.opts
	node, err := newNodeDeployment(cfg, w.informers)
	if err != nil {
		return err
	}
	if w.capacities, err = newCapacity(ctx, cfg, w.informers.factory); err != nil {
		return err
	}
	apis := append([]metrics.OptionalAPIs{w.snapshots, w.grants}, w.storage.apis()...)
	if w.links != nil {
		apis = append(apis, w.links)
	}
	w.state = metrics.NewState(metrics.StateSources{Claims: w.prov, Attempts: w.attempts, Sources: w.protector, APIs: apis})
	w.controller = controller.NewProvisionController(ctx, eventsApart{Interface: cfg.kube, events: cfg.events}, cfg.identity.name,
		withCapacityRefresh(withNodeChecks(w.prov, node, w.attempts), w.capacities),
		append(libOptions(opts, w.claims, w.informers, cfg.provisionMetrics), append(upstreamOptions(opts), migrationOption(ctx, cfg.identity.name))...)...)
	return nil
}

// run runs every component until ctx ends: the caches first, then, once
// they have synced, the library's controller. It returns once the
// controller's workers and every component have stopped.
func (w *wiring) run(ctx context.Context, ready *readiness) {
	logger := klog.FromContext(ctx)
	// The state gauges are exported while this replica provisions: a
	// standby runs no caches, and would show every optional API
	// unavailable.
	if w.cfg.registerer != nil {
		if err := w.cfg.registerer.Register(w.state); err != nil {
			logger.Error(err, "Cannot export the state gauges")
		} else {
			defer w.cfg.registerer.Unregister(w.state)
		}
	}
	w.informers.factory.Start(ctx.Done())
	// The controller's workers join wg too, so run returns (and a leader
	// releases its Lease) only once they have finished.
	var wg sync.WaitGroup
	w.controller.ControllerWaitGroup(&wg)
	for _, r := range w.runners() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r(ctx)
		}()
	}
	for typ, ok := range w.informers.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			logger.Error(nil, "Informer did not sync", "type", typ)
			return
		}
	}
	settled := append([]<-chan struct{}{w.snapshots.Settled(), w.grants.Settled()}, w.storage.settled()...)
	if w.links != nil {
		settled = append(settled, w.links.Settled())
	}
	if !waitSettled(ctx, settled, optionalSettleWait) {
		logger.Info("Provisioning before every optional API has settled: a claim that needs one is retried once it has",
			"waited", optionalSettleWait)
	}
	ready.set()
	logger.Info("Caches synced, provisioning", "driver", w.cfg.identity.name,
		"crossNamespace", features.CrossNamespaceEnabled(w.opts.FeatureGate), "crossNamespaceSnapshot", w.links != nil)
	// Wait for the provisioning workers too, so that run returns after
	// their last write (ReleaseLeaderElectionOnExit releases the Lease then).
	w.controller.ControllerWaitGroup(&wg)
	w.controller.Run(ctx)
	wg.Wait()
}

// runners are the components that run beside the library's controller.
func (w *wiring) runners() []func(context.Context) {
	opts := w.opts
	runners := append([]func(context.Context){w.snapshots.Run, w.grants.Run,
		func(ctx context.Context) { w.protector.Run(ctx, opts.FinalizerThreads) },
		func(ctx context.Context) { w.settle.Run(ctx, settlers) }},
		w.storage.runners()...)
	if w.links != nil {
		runners = append(runners, w.links.Run, func(ctx context.Context) { w.linkStatus.Run(ctx, linkStatusWorkers) })
	}
	if w.capacities != nil {
		runners = append(runners, func(ctx context.Context) { w.capacities.Run(ctx, opts.Capacity.Threads) })
	}
	return runners
}

// optionalSettleWait bounds how long a starting sidecar waits for the
// optional APIs (snapshots, grants, links, storage classes' companions) to
// settle before it provisions: each claim that needs one then gets its
// answer at the first try rather than a "cache not synced yet" warning, and
// a slow first list of one API does not hold back every other claim.
const optionalSettleWait = 30 * time.Second

// waitSettled waits until every channel is closed; false if d passed (or
// ctx ended) first.
func waitSettled(ctx context.Context, settled []<-chan struct{}, d time.Duration) bool {
	timeout := time.NewTimer(d)
	defer timeout.Stop()
	for _, ch := range settled {
		select {
		case <-ch:
		case <-timeout.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// linkStatusWorkers write the conditions of VolumeSnapshotLinks; a status
// changes only when a link, its snapshot or a grant does, so a few suffice.
const linkStatusWorkers = 2

// newLinks returns the VolumeSnapshotLink cache, wired to re-queue the
// claims that restore through links, or nil when --cross-namespace-snapshot
// is off. The cache starts whenever the CRD is served; onSynced is called,
// before the claims are re-queued, each time it can be read again.
func newLinks(cfg *buildConfig, claims *requeue.Claims, onSynced func()) (*linkcache.Cache, error) {
	if !cfg.opts.CrossNamespaceSnapshot {
		return nil, nil
	}
	if cfg.links == nil {
		var err error
		if cfg.links, err = linkclientset.NewForConfig(cfg.rest); err != nil {
			return nil, err
		}
	}
	if cfg.linkDiscovery == nil {
		cfg.linkDiscovery = cfg.links.Discovery()
	}
	links := linkcache.New(linkcache.Config{Client: cfg.links, Discovery: cfg.linkDiscovery, ResyncPeriod: cfg.opts.ResyncPeriod,
		PollInterval: cfg.pollInterval, WatchList: watchList, OnSynced: func() {
			onSynced()
			claims.LinksSynced()
		}})
	claims.SetLinks(links)
	links.AddHandler(claims.LinkHandler())
	return links, nil
}

// upstreamOptions are the ProvisionController options the upstream
// csi-provisioner v6.4.0 sets that libOptions does not. With
// CreateProvisionedPVLimiter a PV that cannot be saved is retried, rate
// limited, until it is saved, instead of five times ten seconds apart after
// which the library deletes the volume it just created. RetryIntervalMax is
// passed as upstream passes --retry-interval-max, although library v13
// sizes its slow set before applying options, so it changes nothing yet.
func upstreamOptions(opts *Options) []func(*controller.ProvisionController) error {
	return []func(*controller.ProvisionController) error{
		controller.CreateProvisionedPVLimiter(workqueue.DefaultTypedControllerRateLimiter[string]()),
		controller.RetryIntervalMax(opts.RetryIntervalMax),
	}
}

// storageCaches are the optional storage.k8s.io/v1 caches (internal/sidecar/storagecache):
// each is nil when its feature is off. They never hold up the start.
type storageCaches struct {
	attributesClasses *storagecache.AttributesClasses
	attachments       *storagecache.Attachments
}

func newStorageCaches(cfg buildConfig) storageCaches {
	storage := storagecache.Config{Client: cfg.kube, Discovery: cfg.kubeDiscovery, ResyncPeriod: cfg.opts.ResyncPeriod,
		PollInterval: cfg.pollInterval, WatchList: watchList}
	var c storageCaches
	if gate := cfg.opts.Volume.VolumeAttributesClass; gate == nil || *gate {
		// Set off, upstream never reads VolumeAttributesClasses.
		c.attributesClasses = storagecache.NewAttributesClasses(storage)
	}
	if cfg.identity.caps.PublishUnpublishVolume {
		// As upstream: only volumes of a driver that attaches them can be
		// attached, and only then are VolumeAttachments watched.
		c.attachments = storagecache.NewAttachments(storage)
	}
	return c
}

// attributesClassGetter is the cache for the provisioner, nil (the feature
// off) when there is none.
func (c storageCaches) attributesClassGetter() provisioner.AttributesClasses {
	if c.attributesClasses == nil {
		return nil
	}
	return c.attributesClasses
}

// attachmentLister is the VolumeAttachment cache for the provisioner, nil
// (nothing to check) when there is none.
func (c storageCaches) attachmentLister() provisioner.Attachments {
	if c.attachments == nil {
		return nil
	}
	return c.attachments
}

// apis are the caches there are, for the availability gauges.
func (c storageCaches) apis() []metrics.OptionalAPIs {
	var out []metrics.OptionalAPIs
	if c.attributesClasses != nil {
		out = append(out, c.attributesClasses)
	}
	if c.attachments != nil {
		out = append(out, c.attachments)
	}
	return out
}

// settled are the Settled channels of the caches there are.
func (c storageCaches) settled() []<-chan struct{} {
	var out []<-chan struct{}
	if c.attributesClasses != nil {
		out = append(out, c.attributesClasses.Settled())
	}
	if c.attachments != nil {
		out = append(out, c.attachments.Settled())
	}
	return out
}

// runners are the Run functions of the caches there are.
func (c storageCaches) runners() []func(context.Context) {
	var out []func(context.Context)
	if c.attributesClasses != nil {
		out = append(out, c.attributesClasses.Run)
	}
	if c.attachments != nil {
		out = append(out, c.attachments.Run)
	}
	return out
}

// forgetDone lets the provisioner drop state of deleted claims, and of
// claims bound or handed to another provisioner.
func forgetDone(p *provisioner.Provisioner) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			if claim, ok := obj.(*v1.PersistentVolumeClaim); ok {
				p.ClaimChanged(claim)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if claim, ok := obj.(*v1.PersistentVolumeClaim); ok {
				p.ForgetClaim(claim.UID)
			}
		}}
}

// volumesSaved tells the provisioner which PVs the cache shows, so it
// stops holding them as being saved.
func volumesSaved(p *provisioner.Provisioner) cache.ResourceEventHandler {
	saved := func(obj any) {
		if pv, ok := obj.(*v1.PersistentVolume); ok {
			p.VolumeSaved(pv)
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: saved, UpdateFunc: func(_, obj any) { saved(obj) }}
}

// readiness reports ready once the caches synced and provisioning runs, or,
// under leader election, once the replica is connected to its driver.
type readiness struct {
	mu    sync.RWMutex
	ready bool
}

func (r *readiness) set() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ready = true
}

func (r *readiness) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if !r.ready {
		http.Error(w, "caches not synced or not the leader", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok"))
}
