package capacity

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/prometheus/client_golang/prometheus"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	storageinformers "k8s.io/client-go/informers/storage/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Defaults of the Config fields left zero; they are upstream's flag defaults.
const (
	DefaultManagedBy          = "external-provisioner"
	DefaultPollInterval       = time.Minute
	DefaultRetryIntervalStart = time.Second
	DefaultRetryIntervalMax   = 5 * time.Minute
)

// queueName names the work queue in the workqueue_* metrics, as upstream.
const queueName = "csistoragecapacity"

// byKeyIndex indexes the CSIStorageCapacity cache by the key of each object.
const byKeyIndex = "capacityKey"

// CSIClient is the one CSI call the controller makes. Each call must be
// bounded by the client (the sidecar's --timeout), as internal/sidecar/csi bounds its
// calls: a call that never returns stalls a worker.
type CSIClient interface {
	GetCapacity(ctx context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error)
}

// Clock makes the poll ticker; k8s.io/utils/clock.RealClock is one, tests
// pass a fake.
type Clock interface {
	NewTicker(d time.Duration) clock.Ticker
}

// Config is what New needs. The package documentation says where each field
// comes from in the sidecar.
type Config struct {
	// DriverName is the CSI driver's name.
	DriverName string
	// ManagedBy is the ManagedByLabel value; empty means DefaultManagedBy.
	ManagedBy string
	// Namespace holds the objects: the sidecar's own (NAMESPACE).
	Namespace string
	// Owner is the objects' owner (ResolveOwner); nil for none.
	Owner *metav1.OwnerReference
	// ImmediateBinding also tracks classes that bind immediately
	// (--capacity-for-immediate-binding).
	ImmediateBinding bool

	// Client writes the objects and lists and watches them, in Namespace
	// and with our labels only. It is the controller's own client, rate
	// limited by --kube-api-capacity-qps and --kube-api-capacity-burst.
	Client kubernetes.Interface
	// CSI answers GetCapacity.
	CSI CSIClient

	// StorageClasses, Nodes and CSINodes come from the sidecar's informer
	// factory, which the caller starts after New. Nodes and CSINodes are
	// not used (and may be nil) with FixedSegment.
	StorageClasses storageinformers.StorageClassInformer
	Nodes          coreinformers.NodeInformer
	CSINodes       storageinformers.CSINodeInformer
	// FixedSegment, when set, is the only segment, instead of those the
	// nodes define: one sidecar per node (--node-deployment) publishes the
	// capacity of its node's segment, as NodeGetInfo reports it.
	FixedSegment *Segment

	// PollInterval is how often every object is refreshed from the driver
	// (--capacity-poll-interval); zero means DefaultPollInterval.
	PollInterval time.Duration
	// RetryIntervalStart and RetryIntervalMax bound the exponential
	// backoff of failed work (--retry-interval-start/-max); zero means the
	// defaults.
	RetryIntervalStart, RetryIntervalMax time.Duration
	// ResyncPeriod of the controller's own CSIStorageCapacity informer;
	// zero means none.
	ResyncPeriod time.Duration
	// Registerer gets the controller's metrics; nil registers none.
	Registerer prometheus.Registerer
	// Clock makes the poll ticker; nil means the real clock.
	Clock Clock
}

func (cfg *Config) validate() error {
	var errs []error
	if cfg.ManagedBy == "" {
		cfg.ManagedBy = DefaultManagedBy
	}
	for name, v := range map[string]string{"driver name": cfg.DriverName, "managed-by": cfg.ManagedBy} {
		if msgs := validation.IsValidLabelValue(v); v == "" || len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s %q is no label value: %v", name, v, msgs))
		}
	}
	if cfg.Namespace == "" {
		errs = append(errs, errors.New("namespace is empty"))
	}
	if cfg.Client == nil || cfg.CSI == nil || cfg.StorageClasses == nil {
		errs = append(errs, errors.New("Client, CSI and StorageClasses are required"))
	}
	if cfg.FixedSegment == nil && (cfg.Nodes == nil || cfg.CSINodes == nil) {
		errs = append(errs, errors.New("Nodes and CSINodes are required without a FixedSegment"))
	}
	if cfg.PollInterval < 0 || cfg.RetryIntervalStart < 0 || cfg.RetryIntervalMax < 0 || cfg.ResyncPeriod < 0 {
		errs = append(errs, errors.New("intervals must not be negative"))
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.RetryIntervalStart == 0 {
		cfg.RetryIntervalStart = DefaultRetryIntervalStart
	}
	if cfg.RetryIntervalMax == 0 {
		cfg.RetryIntervalMax = DefaultRetryIntervalMax
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return errors.Join(errs...)
}

// Controller keeps the CSIStorageCapacity objects of one driver: one per
// tracked storage class and topology segment, with what GetCapacity reports.
//
// Work items are keys (a class in a segment) and the sweep. The sweep
// derives the segments from the caches, plans for everything, and queues the
// keys that need work; a key's worker asks GetCapacity if it has no fresh
// report and applies the plan of that key alone. All writes happen in key
// workers, and the queue never hands one key to two workers at a time.
type Controller struct {
	policy       Policy
	csi          CSIClient
	client       kubernetes.Interface
	classes      storagelisters.StorageClassLister
	nodes        corelisters.NodeLister
	csiNodes     storagelisters.CSINodeLister
	fixed        *Segment
	capacities   cache.SharedIndexInformer
	synced       []cache.InformerSynced
	queue        workqueue.TypedRateLimitingInterface[item]
	clock        Clock
	pollInterval time.Duration

	mu sync.Mutex
	// segments are the segments the last sweep found, by ID.
	segments map[string]Segment
	// desired are the keys the last sweep planned objects for.
	desired map[Key]bool
	// reports are the fresh GetCapacity answers; polls and refreshes drop
	// them, which makes the key's worker ask again.
	reports map[Key]Report
	// written are the objects this controller wrote that its cache has not
	// reported back yet.
	written writtenObjects

	// work, events and polls let tests wait until the controller is idle:
	// the work queued or in progress, the informer events handled, the
	// polls done.
	work   workTracker
	events atomic.Int64
	polls  atomic.Int64
}

// item is a unit of work: the sweep, or one key.
type item struct {
	sweep bool
	key   Key
}

var sweepItem = item{sweep: true}

// New returns a controller for cfg and registers its event handlers and
// metrics. Start the informer factory of cfg's informers afterwards, then
// call Run.
func New(cfg Config) (*Controller, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("invalid storage capacity configuration: %w", err)
	}
	c := &Controller{
		policy: Policy{DriverName: cfg.DriverName, ManagedBy: cfg.ManagedBy, Namespace: cfg.Namespace,
			Owner: cfg.Owner, ImmediateBinding: cfg.ImmediateBinding},
		csi:          cfg.CSI,
		client:       cfg.Client,
		classes:      cfg.StorageClasses.Lister(),
		fixed:        cfg.FixedSegment,
		clock:        cfg.Clock,
		pollInterval: cfg.PollInterval,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[item](cfg.RetryIntervalStart, cfg.RetryIntervalMax),
			workqueue.TypedRateLimitingQueueConfig[item]{Name: queueName}),
		segments: map[string]Segment{},
		desired:  map[Key]bool{},
		reports:  map[Key]Report{},
	}
	selector := labels.SelectorFromSet(c.policy.Labels()).String()
	c.capacities = storageinformers.NewFilteredCSIStorageCapacityInformer(cfg.Client, cfg.Namespace, cfg.ResyncPeriod,
		cache.Indexers{byKeyIndex: indexByKey},
		func(opts *metav1.ListOptions) { opts.LabelSelector = selector })
	c.synced = []cache.InformerSynced{c.capacities.HasSynced, cfg.StorageClasses.Informer().HasSynced}
	if c.fixed == nil {
		c.nodes, c.csiNodes = cfg.Nodes.Lister(), cfg.CSINodes.Lister()
		c.synced = append(c.synced, cfg.Nodes.Informer().HasSynced, cfg.CSINodes.Informer().HasSynced)
	}
	if err := c.addEventHandlers(cfg); err != nil {
		return nil, err
	}
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(collector{c}); err != nil {
			return nil, fmt.Errorf("register storage capacity metrics: %w", err)
		}
	}
	return c, nil
}

func indexByKey(obj any) ([]string, error) {
	capacity, ok := obj.(*storagev1.CSIStorageCapacity)
	if !ok {
		return nil, nil
	}
	return []string{indexValue(keyOf(capacity))}, nil
}

// indexValue is a key in the index; class names contain no newline.
func indexValue(k Key) string { return k.Class + "\n" + k.Segment }

// Run keeps the objects until ctx is done, with the given number of workers
// (--capacity-threads), and returns once they have stopped. It runs the
// controller's own CSIStorageCapacity informer; the caller runs the others.
func (c *Controller) Run(ctx context.Context, workers int) {
	logger := klog.FromContext(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.queue.ShutDown()

	wg.Go(func() { c.capacities.RunWithContext(ctx) })
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	// Workers act on what the first sweep found, never on an empty view.
	if err := c.sweep(ctx); err != nil {
		logger.Error(err, "First storage capacity sweep failed; retrying")
		c.enqueueRateLimited(sweepItem)
	}
	logger.Info("Starting storage capacity controller", "driver", c.policy.DriverName, "namespace", c.policy.Namespace,
		"managedBy", c.policy.ManagedBy, "workers", workers, "pollInterval", c.pollInterval)
	for range workers {
		wg.Go(func() {
			wait.UntilWithContext(ctx, func(ctx context.Context) {
				for c.processNext(ctx) {
				}
			}, time.Second)
		})
	}
	wg.Go(func() { c.pollLoop(ctx) })
	<-ctx.Done()
	logger.Info("Stopping storage capacity controller")
}

// pollLoop refreshes every object each poll interval.
func (c *Controller) pollLoop(ctx context.Context) {
	ticker := c.clock.NewTicker(c.pollInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
			c.poll()
		}
	}
}

// poll refreshes every desired key and ages what the controller remembers
// of its writes.
func (c *Controller) poll() {
	c.mu.Lock()
	c.written.age()
	c.mu.Unlock()
	c.refresh(func(Key) bool { return true })
	c.polls.Add(1)
}

// refresh drops the reports of the desired keys that match and queues them,
// so that their workers ask GetCapacity again. It returns the keys.
func (c *Controller) refresh(match func(Key) bool) []Key {
	c.mu.Lock()
	var keys []Key
	for k := range c.desired {
		if match(k) {
			delete(c.reports, k)
			keys = append(keys, k)
		}
	}
	c.mu.Unlock()
	for _, k := range keys {
		c.enqueue(item{key: k})
	}
	return keys
}

func (c *Controller) processNext(ctx context.Context) bool {
	it, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	c.work.started(it)
	defer c.work.finished()
	defer c.queue.Done(it)

	var err error
	if it.sweep {
		err = c.sweep(ctx)
	} else {
		err = c.sync(ctx, it.key)
	}
	if err != nil {
		klog.FromContext(ctx).Error(err, "Storage capacity work failed; retrying", "storageClass", it.key.Class, "segment", it.key.Segment, "sweep", it.sweep)
		c.enqueueRateLimited(it)
		return true
	}
	c.queue.Forget(it)
	return true
}

func (c *Controller) enqueue(it item) {
	c.work.queued(it)
	c.queue.Add(it)
}

func (c *Controller) enqueueRateLimited(it item) {
	c.work.queued(it)
	c.queue.AddRateLimited(it)
}

// workTracker counts the items queued or being worked on, so that tests can
// tell when the controller has nothing left to do.
type workTracker struct {
	mu      sync.Mutex
	pending map[item]bool
	busy    int
}

func (w *workTracker) queued(it item) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending == nil {
		w.pending = map[item]bool{}
	}
	w.pending[it] = true
}

func (w *workTracker) started(it item) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.pending, it)
	w.busy++
}

func (w *workTracker) finished() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.busy--
}

func (w *workTracker) idle() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending) == 0 && w.busy == 0
}
