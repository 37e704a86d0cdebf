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
	"github.com/xns-csi/csi-provisioner/internal/sidecar/deletionorder"
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

// watchList lets the optional APIs' informers (snapshots, contents, grants,
// links, VolumeAttributesClasses, VolumeAttachments) stream their initial
// lists, as the core informers do: each object is trimmed as it arrives
// instead of a whole list being decoded first, which at tens of thousands of
// objects is most of the sidecar's peak memory (docs/benchmarks.md). The
// unit tests' fake clientsets cannot stream; they turn client-go's
// WatchListClient gate off (main_test.go).
const watchList = true

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
// leader) and the readiness handler.
func build(ctx context.Context, cfg buildConfig) (func(context.Context), *readiness, error) {
	opts := cfg.opts
	var err error
	if cfg.snapshots == nil {
		if cfg.snapshots, err = snapclientset.NewForConfig(cfg.rest); err != nil {
			return nil, nil, err
		}
	}
	if cfg.gateway == nil {
		if cfg.gateway, err = gatewayclientset.NewForConfig(cfg.rest); err != nil {
			return nil, nil, err
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
	if cfg.pollInterval == 0 {
		cfg.pollInterval = optionalAPIPollInterval
	}
	f := newInformerSet(cfg.kube, opts, cfg.identity.name)
	claims, err := requeue.NewClaims(f.claims)
	if err != nil {
		return nil, nil, err
	}
	factory := f.factory
	// Source protection and the link statuses are told about grant and
	// snapshot cache changes, and decide with those caches' answers: they
	// are set below, before anything runs.
	var protector *sourceprotection.Protector
	var linkStatus *linkstatus.Controller
	snapshots := snapshotcache.New(snapshotcache.Config{Client: cfg.snapshots, Discovery: cfg.snapshotDiscovery,
		ResyncPeriod: opts.ResyncPeriod, PollInterval: cfg.pollInterval, WatchList: watchList, OnSynced: func() {
			claims.SnapshotsSynced()
			if linkStatus != nil {
				linkStatus.Resync()
			}
		}})
	grants := referencegrant.NewChecker(referencegrant.Config{Client: cfg.gateway, Discovery: cfg.gatewayDiscovery,
		ResyncPeriod: opts.ResyncPeriod, PollInterval: cfg.pollInterval, WatchList: watchList,
		OnChange: func(namespace string) {
			claims.GrantsChanged(namespace)
			protector.GrantsChanged(namespace)
			if linkStatus != nil {
				linkStatus.GrantsChanged(namespace)
			}
		}})
	links, err := newLinks(&cfg, claims, func() { protector.LinksSynced() })
	if err != nil {
		return nil, nil, err
	}
	volumeName := func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }
	// Orders claims against their source's deletion request within the
	// second the API's timestamps share (package deletionorder).
	order := deletionorder.New(nil)
	policy := claimsource.Policy{CrossNamespace: features.CrossNamespaceEnabled(opts.FeatureGate), Grants: grants,
		SnapshotLinks: links != nil,
		Driver: claimsource.Driver{Name: cfg.identity.name, RestoresSnapshots: cfg.identity.caps.SupportsSnapshotRestore(),
			Clones: cfg.identity.caps.SupportsClone(), PreventVolumeModeConversion: opts.Volume.PreventVolumeModeConversion},
		Snapshots: snapshots, Claims: factory.Core().V1().PersistentVolumeClaims().Lister(), Volumes: factory.Core().V1().PersistentVolumes().Lister(),
		Order: order}
	// The sidecar that holds a source in use, for the marks of its calls in
	// flight: with --node-deployment, one per driver and node. Without it,
	// one sidecar of the driver (the leader) provides and protects, and no
	// other process uses the sources it protects (another driver's sidecar
	// cannot restore or clone them): it marks nothing.
	var holder string
	if cfg.identity.node != nil {
		holder = cfg.identity.name + "/" + cfg.identity.node.Name
	}
	protection := sourceprotection.Config{Client: cfg.kube, SnapshotClient: cfg.snapshots,
		Snapshots: snapshots, Claims: f.claims.GetIndexer(), Volumes: factory.Core().V1().PersistentVolumes().Lister(),
		VolumeName: volumeName, InFlight: inflight.New(), Synced: []cache.InformerSynced{f.claims.HasSynced, f.volumes.HasSynced},
		Linger: cmp.Or(cfg.sourceLinger, sourceProtectionLinger), Holder: holder, SnapshotList: snapshots}
	if links != nil {
		policy.Links, protection.Links = links, links
		linkStatus = linkstatus.New(linkstatus.Config{Client: cfg.links, Links: links, Snapshots: snapshots, Grants: grants})
		links.AddHandler(linkStatus.LinkHandler())
		links.AddHandler(order.LinkHandler()) // a restore through a link is as new as the link
		order.Delivering(&snapv1alpha1.VolumeSnapshotLink{}, links.HandlersSynced)
		snapshots.AddSnapshotHandler(linkStatus.SnapshotHandler())
	}
	protection.Policy = policy
	attempts := protection.InFlight
	protector = sourceprotection.New(protection)
	attempts.OnEnd(protector.Recheck)
	if cfg.events == nil {
		cfg.events = cfg.kube
	}
	recorder := newRecorder(ctx, cfg.events, cfg.identity.name)
	storage := newStorageCaches(cfg)
	nodes, csiNodes := topologyListers(cfg, factory)
	prov := provisioner.New(provisioner.Config{
		DriverName:   cfg.identity.name,
		Identity:     provisionerIdentity(provisioner.Identity(time.Now(), rand.IntN(10000), cfg.identity.name), cfg.identity.node),
		Capabilities: cfg.identity.caps, Driver: cfg.driver, Client: cfg.kube,
		Claims: factory.Core().V1().PersistentVolumeClaims().Lister(), Volumes: factory.Core().V1().PersistentVolumes().Lister(),
		Nodes: nodes, CSINodes: csiNodes,
		Classes: factory.Storage().V1().StorageClasses().Lister(), AttributesClasses: storage.attributesClassGetter(), Attachments: storage.attachmentLister(), Policy: policy,
		Protector: protector, InFlight: attempts, Recorder: recorder, Metrics: cfg.metrics, Options: opts.Volume,
		RequeueAfter: claims.RequeueAfter,
	})

	// Event wiring: waiting claims are re-queued by what they wait for, and
	// source finalizers are released when their claims are done.
	snapshots.AddSnapshotHandler(claims.SnapshotHandler())
	snapshots.AddSnapshotHandler(order.SourceHandler())
	snapshots.AddSnapshotHandler(protector.SnapshotHandler())
	snapshots.AddContentHandler(claims.ContentHandler())
	settle := newSettler(prov.Settle, attempts, opts)
	claimsSeen, err := f.claims.AddEventHandler(order.ClaimHandler())
	if err != nil {
		return nil, nil, err
	}
	order.Delivering(&v1.PersistentVolumeClaim{}, claimsSeen.HasSynced)
	for _, h := range []cache.ResourceEventHandler{claims.CloneSourceHandler(), protector.ClaimHandler(), forgetDone(prov),
		settle.ClaimHandler()} {
		if _, err := f.claims.AddEventHandler(h); err != nil {
			return nil, nil, err
		}
	}
	for _, h := range []cache.ResourceEventHandler{claims.CloneSourceVolumeHandler(), protector.VolumeHandler(), volumesSaved(prov)} {
		if _, err := f.volumes.AddEventHandler(h); err != nil {
			return nil, nil, err
		}
	}
	node, err := newNodeDeployment(cfg, f)
	if err != nil {
		return nil, nil, err
	}
	capacities, err := newCapacity(ctx, cfg, factory)
	if err != nil {
		return nil, nil, err
	}
	apis := append([]metrics.OptionalAPIs{snapshots, grants}, storage.apis()...)
	if links != nil {
		apis = append(apis, links)
	}
	state := metrics.NewState(metrics.StateSources{Claims: prov, Attempts: attempts, Sources: protector, APIs: apis})

	pc := controller.NewProvisionController(ctx, eventsApart{Interface: cfg.kube, events: cfg.events}, cfg.identity.name,
		withCapacityRefresh(withNodeChecks(prov, node, attempts), capacities),
		append(libOptions(opts, claims, f, cfg.provisionMetrics), append(upstreamOptions(opts), migrationOption(ctx, cfg.identity.name))...)...)
	ready := &readiness{}
	run := func(ctx context.Context) {
		logger := klog.FromContext(ctx)
		// The state gauges are exported while this replica provisions: a
		// standby runs no caches, and would show every optional API
		// unavailable.
		if cfg.registerer != nil {
			if err := cfg.registerer.Register(state); err != nil {
				logger.Error(err, "Cannot export the state gauges")
			} else {
				defer cfg.registerer.Unregister(state)
			}
		}
		factory.Start(ctx.Done())
		// The controller's workers join wg too, so run returns (and a
		// leader releases its Lease) only once they have finished.
		var wg sync.WaitGroup
		pc.ControllerWaitGroup(&wg)
		runners := append([]func(context.Context){snapshots.Run, grants.Run, func(ctx context.Context) { protector.Run(ctx, opts.FinalizerThreads) },
			func(ctx context.Context) { settle.Run(ctx, settlers) }},
			storage.runners()...)
		if links != nil {
			runners = append(runners, links.Run, func(ctx context.Context) { linkStatus.Run(ctx, linkStatusWorkers) })
		}
		if capacities != nil {
			runners = append(runners, func(ctx context.Context) { capacities.Run(ctx, opts.Capacity.Threads) })
		}
		for _, r := range runners {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r(ctx)
			}()
		}
		synced := factory.WaitForCacheSync(ctx.Done())
		for typ, ok := range synced {
			if !ok {
				logger.Error(nil, "Informer did not sync", "type", typ)
				return
			}
		}
		settled := append([]<-chan struct{}{snapshots.Settled(), grants.Settled()}, storage.settled()...)
		if links != nil {
			settled = append(settled, links.Settled())
		}
		if !waitSettled(ctx, settled, optionalSettleWait) {
			logger.Info("Provisioning before every optional API has settled: a claim that needs one is retried once it has",
				"waited", optionalSettleWait)
		}
		ready.set()
		logger.Info("Caches synced, provisioning", "driver", cfg.identity.name,
			"crossNamespace", features.CrossNamespaceEnabled(opts.FeatureGate), "crossNamespaceSnapshot", links != nil)
		// Wait for the provisioning workers too, so that run returns after
		// their last write (ReleaseLeaderElectionOnExit releases the Lease then).
		pc.ControllerWaitGroup(&wg)
		pc.Run(ctx)
		wg.Wait()
	}
	return run, ready, nil
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
