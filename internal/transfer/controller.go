package transfer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge"
	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
	transferinformers "github.com/xns-csi/csi-provisioner/pkg/generated/informers"
)

// The indexes of the caches.
const (
	// byRequest indexes accepts by the request they name
	// ("sourceNamespace/requestName").
	byRequest = "request"
	// byObject indexes requests by the objects they depend on
	// ("<kind>/<namespace>/<name>": the source and the target).
	byObject = "object"
	// byUID indexes requests by UID, to find the request of an object
	// that carries plan.RequestAnnotation or plan.LockAnnotation.
	byUID = "uid"
	// byClaim indexes pods by the claims they use ("namespace/claim"),
	// named or of their generic ephemeral volumes.
	byClaim = "claim"
)

// The keys of the queue: a request, an accept whose request may not
// exist, or a claim or snapshot that carries plan.LockAnnotation
// ("lock/<kind>/<namespace>/<name>"), whose request may not exist either.
const (
	requestKeyPrefix = "request/"
	acceptKeyPrefix  = "accept/"
	lockKeyPrefix    = "lock/"
)

// waitInterval is how soon a transfer that waits is looked at again even
// if no event says something changed.
const waitInterval = 30 * time.Second

// Config is what New needs.
type Config struct {
	// Kube reads and writes claims, volumes and pods; Snapshot
	// VolumeSnapshots and VolumeSnapshotContents; API the requests and
	// accepts.
	Kube     kubernetes.Interface
	Snapshot snapclientset.Interface
	API      versioned.Interface
	// Recorder writes the events on requests and accepts.
	Recorder record.EventRecorder
	// ResyncPeriod of the informers.
	ResyncPeriod time.Duration
	// Retention of completed transfers.
	Retention time.Duration
	// Metrics counts the transfers; none when nil.
	Metrics *Metrics
	// Clock is the real clock when nil.
	Clock clock.Clock
	// Token returns a new request token; newToken when nil.
	Token func() (string, error)
	// Admit has the target namespace admit a VolumeSnapshot it would
	// create: a server-side dry run of the creation when nil. (The
	// generated fake clientsets drop a create's options, so tests that
	// need a dry run give their own.)
	Admit func(ctx context.Context, s *snapv1.VolumeSnapshot) error
}

// Controller carries out transfers: one queue keyed by request, fed by
// every object a transfer depends on.
type Controller struct {
	cfg       Config
	core      informers.SharedInformerFactory
	api       transferinformers.SharedInformerFactory
	requests  cache.SharedIndexInformer
	accepts   cache.SharedIndexInformer
	snapshots cache.SharedIndexInformer
	contents  cache.SharedIndexInformer
	claims    cache.SharedIndexInformer
	volumes   cache.SharedIndexInformer
	pods      cache.SharedIndexInformer
	queue     workqueue.TypedRateLimitingInterface[string]
	clock     clock.Clock

	// told remembers the last event told per object and reason, so a
	// wait is told once, not on every look.
	mu   sync.Mutex
	told map[string]string
	// requestsSynced reports whether the request cache has synced (its
	// HasSynced; tests that fill the caches by hand say so).
	requestsSynced func() bool
	// acceptSecrets is what each accept's sync last read of its token
	// Secret, by namespace/name (syncAccept).
	acceptSecrets map[string]acceptSecret
}

// New wires the controller; nothing runs until Run.
func New(cfg Config) (*Controller, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Token == nil {
		cfg.Token = newToken
	}
	if cfg.Admit == nil {
		cfg.Admit = func(ctx context.Context, s *snapv1.VolumeSnapshot) error {
			_, err := cfg.Snapshot.SnapshotV1().VolumeSnapshots(s.Namespace).Create(ctx, s, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}
	}
	c := &Controller{
		cfg:   cfg,
		core:  informers.NewSharedInformerFactory(cfg.Kube, cfg.ResyncPeriod),
		api:   transferinformers.NewSharedInformerFactory(cfg.API, cfg.ResyncPeriod),
		clock: cfg.Clock,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "transfers"}),
		told:          map[string]string{},
		acceptSecrets: map[string]acceptSecret{},
	}
	c.requests = c.api.Transfer().V1alpha1().StorageTransferRequests().Informer()
	c.accepts = c.api.Transfer().V1alpha1().StorageTransferAccepts().Informer()
	c.requestsSynced = c.requests.HasSynced
	c.claims = c.core.Core().V1().PersistentVolumeClaims().Informer()
	c.volumes = c.core.Core().V1().PersistentVolumes().Informer()
	c.pods = c.core.Core().V1().Pods().Informer()
	c.snapshots, c.contents = snapshotInformers(cfg)
	if err := c.wire(); err != nil {
		return nil, err
	}
	return c, nil
}

// snapshotInformers are the informers of the VolumeSnapshots and their
// contents, which the transfers move.
func snapshotInformers(cfg Config) (snapshots, contents cache.SharedIndexInformer) {
	snapshots = cache.NewSharedIndexInformer(&listing{ListWatch: &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cfg.Snapshot.SnapshotV1().VolumeSnapshots("").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return cfg.Snapshot.SnapshotV1().VolumeSnapshots("").Watch(ctx, o)
		},
	}}, &snapv1.VolumeSnapshot{}, cfg.ResyncPeriod, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	contents = cache.NewSharedIndexInformer(&listing{ListWatch: &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cfg.Snapshot.SnapshotV1().VolumeSnapshotContents().List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return cfg.Snapshot.SnapshotV1().VolumeSnapshotContents().Watch(ctx, o)
		},
	}}, &snapv1.VolumeSnapshotContent{}, cfg.ResyncPeriod, cache.Indexers{})
	return snapshots, contents
}

// wire adds the caches' indexes and the handlers that queue the transfers
// an object's change concerns.
func (c *Controller) wire() error {
	if err := c.accepts.AddIndexers(cache.Indexers{byRequest: acceptRequestIndex}); err != nil {
		return err
	}
	if err := c.requests.AddIndexers(cache.Indexers{byObject: requestObjectIndex, byUID: requestUIDIndex}); err != nil {
		return err
	}
	if err := c.pods.AddIndexers(cache.Indexers{byClaim: podClaimIndex}); err != nil {
		return err
	}
	for _, h := range []struct {
		inf  cache.SharedIndexInformer
		keys func(obj any) []string
	}{
		{c.requests, c.requestKeys},
		{c.accepts, c.acceptKeys},
		{c.snapshots, c.snapshotKeys},
		{c.contents, c.contentKeys},
		{c.claims, c.claimKeys},
		{c.volumes, c.volumeKeys},
		{c.pods, c.podKeys},
	} {
		if _, err := h.inf.AddEventHandler(c.enqueueAll(h.keys)); err != nil {
			return err
		}
	}
	// What was told on a request or accept is forgotten with it. A
	// request deleted while it locked its source leaves the lock to
	// syncLock.
	for _, inf := range []cache.SharedIndexInformer{c.requests, c.accepts} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if m, ok := obj.(metav1.Object); ok {
				c.forget(m.GetUID())
			}
			if r, ok := obj.(*transferv1alpha1.StorageTransferRequest); ok {
				c.queue.Add(lockKeyPrefix + objectKey(r.Spec.Source.Kind, r.Namespace, r.Spec.Source.Name))
			}
		}}); err != nil {
			return err
		}
	}
	return nil
}

// Run starts the caches and the workers and blocks until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) {
	logger := klog.FromContext(ctx)
	defer c.queue.ShutDown()
	c.core.Start(ctx.Done())
	c.api.Start(ctx.Done())
	go c.snapshots.RunWithContext(ctx)
	go c.contents.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), c.requests.HasSynced, c.accepts.HasSynced, c.snapshots.HasSynced,
		c.contents.HasSynced, c.claims.HasSynced, c.volumes.HasSynced, c.pods.HasSynced) {
		return
	}
	logger.Info("Caches synced, transferring")
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c.processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
	c.core.Shutdown()
	c.api.Shutdown()
}

// processNext works on one key of the queue.
func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	var after time.Duration
	var err error
	switch {
	case strings.HasPrefix(key, requestKeyPrefix):
		after, err = c.syncRequest(ctx, strings.TrimPrefix(key, requestKeyPrefix))
	case strings.HasPrefix(key, acceptKeyPrefix):
		after, err = c.syncAccept(ctx, strings.TrimPrefix(key, acceptKeyPrefix))
	case strings.HasPrefix(key, lockKeyPrefix):
		err = c.syncLock(ctx, strings.TrimPrefix(key, lockKeyPrefix))
	}
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Will retry", "key", key, "err", err)
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	if after > 0 {
		c.queue.AddAfter(key, after)
	}
	return true
}

// enqueueAll is an event handler that queues the keys keys returns for
// the object (and, on updates, for the old object too).
func (c *Controller) enqueueAll(keys func(obj any) []string) cache.ResourceEventHandler {
	add := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		for _, k := range keys(obj) {
			c.queue.Add(k)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    add,
		UpdateFunc: func(old, obj any) { add(old); add(obj) },
		DeleteFunc: add,
	}
}

// listing is a ListWatch whose initial state is listed, not streamed:
// the snapshot caches are few objects, and the fake clientsets of the
// tests cannot stream.
type listing struct {
	*cache.ListWatch
}

// IsWatchListSemanticsUnSupported tells client-go's reflector to list.
func (*listing) IsWatchListSemanticsUnSupported() bool { return true }

func objectKey(kind, namespace, name string) string {
	return kind + "/" + namespace + "/" + name
}

func acceptRequestIndex(obj any) ([]string, error) {
	a, ok := obj.(*transferv1alpha1.StorageTransferAccept)
	if !ok {
		return nil, nil
	}
	return []string{a.Spec.SourceNamespace + "/" + a.Spec.RequestName}, nil
}

func requestObjectIndex(obj any) ([]string, error) {
	r, ok := obj.(*transferv1alpha1.StorageTransferRequest)
	if !ok {
		return nil, nil
	}
	keys := []string{objectKey(r.Spec.Source.Kind, r.Namespace, r.Spec.Source.Name)}
	if r.Status.TargetNamespace != "" {
		keys = append(keys, objectKey(r.Spec.Source.Kind, r.Status.TargetNamespace, r.Spec.TargetName))
	}
	return keys, nil
}

func requestUIDIndex(obj any) ([]string, error) {
	r, ok := obj.(*transferv1alpha1.StorageTransferRequest)
	if !ok {
		return nil, nil
	}
	return []string{string(r.UID)}, nil
}

func podClaimIndex(obj any) ([]string, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, nil
	}
	var keys []string
	for _, vol := range pod.Spec.Volumes {
		switch {
		case vol.PersistentVolumeClaim != nil:
			keys = append(keys, pod.Namespace+"/"+vol.PersistentVolumeClaim.ClaimName)
		case vol.Ephemeral != nil:
			// A generic ephemeral volume's claim is named after the pod
			// and the volume (k8s.io/component-helpers/storage/ephemeral,
			// VolumeClaimName); the pod uses it as if it named it.
			keys = append(keys, pod.Namespace+"/"+pod.Name+"-"+vol.Name)
		}
	}
	return keys, nil
}

func (c *Controller) requestKeys(obj any) []string {
	r, ok := obj.(*transferv1alpha1.StorageTransferRequest)
	if !ok {
		return nil
	}
	return []string{requestKeyPrefix + r.Namespace + "/" + r.Name}
}

func (c *Controller) acceptKeys(obj any) []string {
	a, ok := obj.(*transferv1alpha1.StorageTransferAccept)
	if !ok {
		return nil
	}
	return []string{requestKeyPrefix + a.Spec.SourceNamespace + "/" + a.Spec.RequestName, acceptKeyPrefix + a.Namespace + "/" + a.Name}
}

// requestsOf returns the queue keys of the requests that depend on the
// object kind/namespace/name or whose UID meta's annotations name.
func (c *Controller) requestsOf(kind, namespace, name string, meta metav1.Object) []string {
	var keys []string
	objs, _ := c.requests.GetIndexer().ByIndex(byObject, objectKey(kind, namespace, name))
	if meta != nil {
		for _, ann := range []string{plan.RequestAnnotation, plan.LockAnnotation} {
			if uid := meta.GetAnnotations()[ann]; uid != "" {
				more, _ := c.requests.GetIndexer().ByIndex(byUID, uid)
				objs = append(objs, more...)
			}
		}
	}
	for _, o := range objs {
		keys = append(keys, c.requestKeys(o)...)
	}
	return keys
}

func (c *Controller) snapshotKeys(obj any) []string {
	s, ok := obj.(*snapv1.VolumeSnapshot)
	if !ok {
		return nil
	}
	return append(c.requestsOf(transferv1alpha1.KindVolumeSnapshot, s.Namespace, s.Name, s), lockKeys(transferv1alpha1.KindVolumeSnapshot, s)...)
}

func (c *Controller) contentKeys(obj any) []string {
	s, ok := obj.(*snapv1.VolumeSnapshotContent)
	if !ok {
		return nil
	}
	ref := s.Spec.VolumeSnapshotRef
	return c.requestsOf(transferv1alpha1.KindVolumeSnapshot, ref.Namespace, ref.Name, s)
}

func (c *Controller) claimKeys(obj any) []string {
	pvc, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok {
		return nil
	}
	return append(c.requestsOf(transferv1alpha1.KindPersistentVolumeClaim, pvc.Namespace, pvc.Name, pvc), lockKeys(transferv1alpha1.KindPersistentVolumeClaim, pvc)...)
}

// lockKeys is the queue key of the lock the claim or snapshot m carries,
// if it carries one.
func lockKeys(kind string, m metav1.Object) []string {
	if _, ok := m.GetAnnotations()[plan.LockAnnotation]; !ok {
		return nil
	}
	return []string{lockKeyPrefix + objectKey(kind, m.GetNamespace(), m.GetName())}
}

// syncLock removes from the claim or snapshot of key ("<kind>/<namespace>/
// <name>") the lock of a request that no longer exists, and from a claim
// plan.Finalizer: a request deleted while it locked its source (its
// finalizer removed by hand) would leave the source locked for good, a
// claim undeletable, and every later request waiting with
// SourceLockedByAnotherTransfer. A request locks its source only once it
// exists and holds its finalizer, so a lock whose UID no request has is
// one of a deleted request. The workers start once the caches have
// synced, but the cache may be behind a request just created: the lock is
// removed only if the API server lists no request of that UID in the
// namespace either (one list, only for a lock the cache cannot explain).
func (c *Controller) syncLock(ctx context.Context, key string) error {
	kind, rest, _ := strings.Cut(key, "/")
	var obj interface {
		metav1.Object
		runtime.Object
	}
	switch kind {
	case transferv1alpha1.KindPersistentVolumeClaim:
		if pvc := getAs[*v1.PersistentVolumeClaim](c.claims, rest); pvc != nil {
			obj = pvc
		}
	case transferv1alpha1.KindVolumeSnapshot:
		if s := getAs[*snapv1.VolumeSnapshot](c.snapshots, rest); s != nil {
			obj = s
		}
	}
	if obj == nil {
		return nil
	}
	uid := obj.GetAnnotations()[plan.LockAnnotation]
	if uid == "" {
		return nil
	}
	if held, _ := c.requests.GetIndexer().ByIndex(byUID, uid); len(held) > 0 {
		return nil // the request's sync takes care of its lock
	}
	requests, err := c.cfg.API.TransferV1alpha1().StorageTransferRequests(obj.GetNamespace()).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the requests that may hold the lock of %s %s/%s: %w", kind, obj.GetNamespace(), obj.GetName(), err)
	}
	for _, r := range requests.Items {
		if string(r.UID) == uid {
			return nil // the cache is behind: the request exists
		}
	}
	what := "its lock is removed"
	switch o := obj.(type) {
	case *v1.PersistentVolumeClaim:
		pvc := o.DeepCopy()
		delete(pvc.Annotations, plan.LockAnnotation)
		if slices.Contains(pvc.Finalizers, plan.Finalizer) {
			pvc.Finalizers = slices.DeleteFunc(pvc.Finalizers, func(f string) bool { return f == plan.Finalizer })
			what = "its lock and finalizer are removed"
		}
		_, err = c.cfg.Kube.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{})
	case *snapv1.VolumeSnapshot:
		s := o.DeepCopy()
		delete(s.Annotations, plan.LockAnnotation)
		_, err = c.cfg.Snapshot.SnapshotV1().VolumeSnapshots(s.Namespace).Update(ctx, s, metav1.UpdateOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("removing the lock of %s %s/%s: %w", kind, obj.GetNamespace(), obj.GetName(), err)
	}
	klog.FromContext(ctx).Info("Removed the lock of a request that no longer exists", "kind", kind, "object", klog.KObj(obj), "requestUID", uid)
	c.tell(obj, v1.EventTypeNormal, ReasonLockCollected, fmt.Sprintf("the StorageTransferRequest of UID %s that locked %s %s/%s is gone: %s",
		uid, kind, obj.GetNamespace(), obj.GetName(), what))
	return nil
}

func (c *Controller) volumeKeys(obj any) []string {
	pv, ok := obj.(*v1.PersistentVolume)
	if !ok || pv.Spec.ClaimRef == nil {
		return nil
	}
	return c.requestsOf(transferv1alpha1.KindPersistentVolumeClaim, pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name, nil)
}

func (c *Controller) podKeys(obj any) []string {
	keys, _ := podClaimIndex(obj)
	var out []string
	for _, k := range keys {
		ns, name, _ := strings.Cut(k, "/")
		out = append(out, c.requestsOf(transferv1alpha1.KindPersistentVolumeClaim, ns, name, nil)...)
	}
	return out
}

// Metrics are the controller's own counters.
type Metrics struct {
	transfers *prometheus.CounterVec
}

// The state the controller's caches show, computed at each scrape (so
// never out of date, and nothing to keep in step): the requests by kind
// and phase, with the age of the oldest of each phase not yet ended, and
// those stuck past their point of no return.
var (
	requestsDesc = prometheus.NewDesc("storage_transfer_requests",
		"Number of StorageTransferRequests, by kind of object and phase (as this replica's caches show them: read the leader's).",
		[]string{"kind", "phase"}, nil)
	requestsOldestDesc = prometheus.NewDesc("storage_transfer_requests_oldest_seconds",
		"Seconds since the oldest StorageTransferRequest of kind in phase Pending, Matched or Transferring was created "+
			"(absent for a phase without requests, and for Completed and Failed). When high: Pending waits for its accept, "+
			"Matched for its source to be free, Transferring for a step; the request's Transferred condition says what.",
		[]string{"kind", "phase"}, nil)
	stuckDesc = prometheus.NewDesc("storage_transfer_stuck_past_point_of_no_return",
		"Number of transfers past their point of no return (the source deleted) that wait for a person: their Transferred condition says NeedsAttention, BoundToUnexpectedObject or ReturnRefused.",
		[]string{"kind"}, nil)
)

// stateCollector collects the gauges of the requests in c's cache.
type stateCollector struct{ c *Controller }

// Collector is the collector of the controller's state gauges.
func (c *Controller) Collector() prometheus.Collector { return stateCollector{c} }

func (s stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- requestsDesc
	ch <- requestsOldestDesc
	ch <- stuckDesc
}

func (s stateCollector) Collect(ch chan<- prometheus.Metric) {
	if !s.c.requestsSynced() {
		// A standby (its caches never run) or a leader still listing
		// knows nothing: no series, rather than a "0 stuck" that would
		// reset an alert's wait.
		return
	}
	type key struct{ kind, phase string }
	// open are the requests whose transfer has not ended, aged from their
	// creation; ended are counted only.
	open, ended, stuck := stategauge.Cohorts{}, map[key]int{}, map[string]int{}
	for _, kind := range []string{transferv1alpha1.KindVolumeSnapshot, transferv1alpha1.KindPersistentVolumeClaim} {
		stuck[kind] = 0
	}
	for _, obj := range s.c.requests.GetStore().List() {
		r := obj.(*transferv1alpha1.StorageTransferRequest)
		if _, known := stuck[r.Spec.Source.Kind]; !known {
			continue // the CRD allows only the two kinds
		}
		phase := string(r.Status.Phase)
		if phase == "" {
			phase = string(transferv1alpha1.PhasePending)
		}
		if r.Status.Phase == transferv1alpha1.PhaseCompleted || r.Status.Phase == transferv1alpha1.PhaseFailed {
			ended[key{r.Spec.Source.Kind, phase}]++
		} else {
			open.Add(r.CreationTimestamp.Time, r.Spec.Source.Kind, phase)
		}
		if stuckPastPointOfNoReturn(r) {
			stuck[r.Spec.Source.Kind]++
		}
	}
	open.Emit(ch, s.c.clock.Now(), requestsDesc, requestsOldestDesc)
	for k, n := range ended {
		ch <- prometheus.MustNewConstMetric(requestsDesc, prometheus.GaugeValue, float64(n), k.kind, k.phase)
	}
	for kind, n := range stuck {
		ch <- prometheus.MustNewConstMetric(stuckDesc, prometheus.GaugeValue, float64(n), kind)
	}
}

// stuckPastPointOfNoReturn reports whether r's transfer is past its point
// of no return and waits for a person.
func stuckPastPointOfNoReturn(r *transferv1alpha1.StorageTransferRequest) bool {
	if !meta.IsStatusConditionTrue(r.Status.Conditions, transferv1alpha1.ConditionPastPointOfNoReturn) ||
		r.Status.Phase == transferv1alpha1.PhaseCompleted || r.Status.Phase == transferv1alpha1.PhaseFailed {
		return false
	}
	c := meta.FindStatusCondition(r.Status.Conditions, transferv1alpha1.ConditionTransferred)
	return c != nil && (c.Reason == plan.ReasonNeedsAttention || c.Reason == plan.ReasonBoundElsewhere || c.Reason == plan.ReasonReturnRefused)
}

// NewMetrics creates the metrics and registers them with reg:
// storage_transfer_transfers_total{kind, phase}, the transfers that ended,
// by kind and final phase (Completed or Failed).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{transfers: prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "storage_transfer", Name: "transfers_total",
		Help: "Number of transfers that ended, by kind of object and final phase.",
	}, []string{"kind", "phase"})}
	if err := reg.Register(m.transfers); err != nil {
		return nil, fmt.Errorf("registering the transfer metrics: %w", err)
	}
	// Every series exists from the start, at 0: an alert on increase()
	// sees the first transfer that ends, not only the ones after it.
	for _, kind := range []string{transferv1alpha1.KindVolumeSnapshot, transferv1alpha1.KindPersistentVolumeClaim} {
		for _, phase := range []transferv1alpha1.Phase{transferv1alpha1.PhaseCompleted, transferv1alpha1.PhaseFailed} {
			m.transfers.WithLabelValues(kind, string(phase))
		}
	}
	return m, nil
}

func (m *Metrics) ended(kind string, phase transferv1alpha1.Phase) {
	if m != nil {
		m.transfers.WithLabelValues(kind, string(phase)).Inc()
	}
}
