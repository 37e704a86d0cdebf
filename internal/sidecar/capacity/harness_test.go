package capacity

// The controller tests run the real controller (informers, queue, workers,
// poll loop) against a fake clientset and a fake driver, with a fake clock
// for the poll interval. A test states the cluster, then steps: start, a
// change through the API, a poll tick, a refresh. After each step it waits
// until the controller is idle (every informer event handled, no work
// queued or in progress) and compares what the step did, as sorted lines:
// every write to CSIStorageCapacities and every GetCapacity call. Nothing
// sleeps; a step that writes one object too many fails.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/wrapperspb"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
)

// idleTimeout bounds every wait; a controller that does not settle fails
// the test instead of hanging it.
const idleTimeout = 30 * time.Second

// harness is a running controller and the world it sees.
type harness struct {
	t        *testing.T
	ctx      context.Context
	client   *kubefake.Clientset
	ctrl     *Controller
	driver   *fakeDriver
	ticks    chan time.Time
	registry *prometheus.Registry

	// initialEvents are the add events the informers deliver for the
	// initial objects; writes counts the writes since that produce one.
	initialEvents int64
	watchNodes    bool
	managedBy     string
	writes        atomic.Int64
	rv            atomic.Int64
	names         atomic.Int64

	mu sync.Mutex
	// lines are what happened since the last check.
	lines []string
	// failWrites makes writes of a verb fail, once each.
	failWrites map[string]int
}

// setup configures a harness.
type setup struct {
	objects []runtime.Object
	// capacity is what the driver reports per segment ID, as upstream's
	// mock driver: "<available>" or "<available>,<maximum volume size>",
	// times the class parameter "multiplier".
	capacity map[string]string
	// config changes the controller's configuration.
	config func(*Config)
	// workers defaults to 2.
	workers *int
}

// start runs a controller for s; it stops when the test ends.
func start(t *testing.T, s setup) *harness {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	h := &harness{
		t: t, ctx: ctx,
		client:     kubefake.NewClientset(),
		driver:     &fakeDriver{capacity: maps.Clone(s.capacity)},
		ticks:      make(chan time.Time),
		registry:   prometheus.NewRegistry(),
		failWrites: map[string]int{},
	}
	h.client.PrependReactor("*", "*", h.react)
	factory := informers.NewSharedInformerFactory(h.client, 0)
	o := owner
	cfg := Config{
		DriverName: driver, Namespace: namespace, Owner: &o,
		Client: h.client, CSI: h.driver,
		StorageClasses:     factory.Storage().V1().StorageClasses(),
		Nodes:              factory.Core().V1().Nodes(),
		CSINodes:           factory.Storage().V1().CSINodes(),
		RetryIntervalStart: time.Millisecond, RetryIntervalMax: 10 * time.Millisecond,
		Registerer: h.registry,
		Clock:      fakeClock{h.ticks},
	}
	if s.config != nil {
		s.config(&cfg)
	}
	h.watchNodes = cfg.FixedSegment == nil
	h.managedBy = cmp.Or(cfg.ManagedBy, DefaultManagedBy)
	for _, obj := range s.objects {
		obj = obj.DeepCopyObject()
		meta, err := metaOf(obj)
		must(t, err)
		meta.SetResourceVersion(h.nextRV())
		must(t, h.client.Tracker().Add(obj))
		if h.listed(obj) {
			h.initialEvents++
		}
	}
	h.driver.h = h
	ctrl, err := New(cfg)
	must(t, err)
	h.ctrl = ctrl
	factory.Start(ctx.Done())
	workers := 2
	if s.workers != nil {
		workers = *s.workers
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctrl.Run(ctx, workers)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		factory.Shutdown()
	})
	return h
}

// listed reports whether the controller's informers list obj when they
// start.
func (h *harness) listed(obj runtime.Object) bool {
	switch o := obj.(type) {
	case *storagev1.StorageClass:
		return true
	case *v1.Node, *storagev1.CSINode:
		return h.watchNodes
	case *storagev1.CSIStorageCapacity:
		// Our namespace and labels only (the fake filters the list by
		// labels, not the watch).
		return o.Namespace == namespace && o.Labels[DriverNameLabel] == driver && o.Labels[ManagedByLabel] == h.managedBy
	}
	return false
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func metaOf(obj runtime.Object) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no object metadata", obj)
	}
	return m, nil
}

func (h *harness) nextRV() string { return strconv.FormatInt(h.rv.Add(1), 10) }

func (h *harness) log(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, fmt.Sprintf(format, args...))
}

// react applies every write to the tracker itself, as the API server
// would: generated names, UIDs and resource versions. It logs the writes
// to CSIStorageCapacities and counts the writes that produce an informer
// event.
func (h *harness) react(action k8stesting.Action) (bool, runtime.Object, error) {
	verb := action.GetVerb()
	if verb != "create" && verb != "update" && verb != "delete" {
		return false, nil, nil
	}
	isCapacity := action.GetResource().Resource == "csistoragecapacities"
	line := ""
	switch a := action.(type) {
	case k8stesting.CreateActionImpl:
		obj := a.GetObject()
		meta, err := metaOf(obj)
		if err != nil {
			return true, nil, err
		}
		if meta.GetName() == "" && meta.GetGenerateName() != "" {
			meta.SetName(meta.GetGenerateName() + strconv.FormatInt(h.names.Add(1), 10))
		}
		if meta.GetUID() == "" {
			meta.SetUID(types.UID("uid-" + meta.GetName()))
		}
		meta.SetResourceVersion(h.nextRV())
		if c, ok := obj.(*storagev1.CSIStorageCapacity); ok {
			line = "create " + describe(c)
		}
	case k8stesting.UpdateActionImpl:
		obj := a.GetObject()
		meta, err := metaOf(obj)
		if err != nil {
			return true, nil, err
		}
		if isCapacity {
			current, err := h.client.Tracker().Get(action.GetResource(), a.GetNamespace(), meta.GetName())
			if err == nil && current.(*storagev1.CSIStorageCapacity).ResourceVersion != meta.GetResourceVersion() {
				h.log("update %s: conflict", meta.GetName())
				return true, nil, conflict(meta.GetName())
			}
			line = "update " + describe(obj.(*storagev1.CSIStorageCapacity))
		}
		meta.SetResourceVersion(h.nextRV())
	case k8stesting.DeleteActionImpl:
		if isCapacity {
			current, err := h.client.Tracker().Get(action.GetResource(), a.GetNamespace(), a.GetName())
			if err == nil {
				line = "delete " + describe(current.(*storagev1.CSIStorageCapacity))
			}
		}
	}
	if isCapacity && h.failOnce(verb) {
		h.log("%s failed", verb)
		return true, nil, fmt.Errorf("injected %s failure", verb)
	}
	handled, obj, err := k8stesting.ObjectReaction(h.client.Tracker())(action)
	if err == nil {
		switch action.GetResource().Resource {
		case "csistoragecapacities":
			if action.GetNamespace() == namespace {
				h.writes.Add(1)
			}
		case "nodes", "csinodes":
			if h.watchNodes {
				h.writes.Add(1)
			}
		case "storageclasses":
			h.writes.Add(1)
		}
		if isCapacity && line != "" {
			h.log("%s", line)
		}
	}
	return handled, obj, err
}

func (h *harness) failOnce(verb string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failWrites[verb] > 0 {
		h.failWrites[verb]--
		return true
	}
	return false
}

// failNext makes the next write of verb to CSIStorageCapacities fail.
func (h *harness) failNext(verb string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failWrites[verb]++
}

// waitIdle waits until the controller has handled every informer event
// and has no work queued or in progress. The counters are read around the
// idle check, so that nothing can have happened in between.
func (h *harness) waitIdle() {
	h.t.Helper()
	err := wait.PollUntilContextTimeout(h.ctx, time.Millisecond, idleTimeout, true, func(context.Context) (bool, error) {
		events, writes := h.ctrl.events.Load(), h.writes.Load()
		idle := h.ctrl.work.idle()
		return idle && events == h.initialEvents+writes &&
			h.ctrl.events.Load() == events && h.writes.Load() == writes, nil
	})
	if err != nil {
		h.t.Fatalf("controller did not become idle: %v (events %d, want %d; idle %v)", err,
			h.ctrl.events.Load(), h.initialEvents+h.writes.Load(), h.ctrl.work.idle())
	}
}

// expect waits until the controller is idle and compares what it did since
// the last expect, in any order.
func (h *harness) expect(step string, want ...string) {
	h.t.Helper()
	h.waitIdle()
	got := h.takeLines()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		h.t.Errorf("%s: the controller did\n  %s\nwant\n  %s", step, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// takeLines returns what happened since the last call.
func (h *harness) takeLines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	got := h.lines
	h.lines = nil
	return got
}

// tick fires the poll ticker and waits until the poll has queued its work.
func (h *harness) tick() {
	h.t.Helper()
	before := h.ctrl.polls.Load()
	select {
	case h.ticks <- time.Now():
	case <-time.After(idleTimeout):
		h.t.Fatal("the poll loop did not take the tick")
	}
	must(h.t, wait.PollUntilContextTimeout(h.ctx, time.Millisecond, idleTimeout, true, func(context.Context) (bool, error) {
		return h.ctrl.polls.Load() > before, nil
	}))
}

// The API changes a step makes.

func (h *harness) create(obj runtime.Object) {
	h.t.Helper()
	var err error
	switch o := obj.(type) {
	case *storagev1.StorageClass:
		_, err = h.client.StorageV1().StorageClasses().Create(h.ctx, o, metav1.CreateOptions{})
	case *v1.Node:
		_, err = h.client.CoreV1().Nodes().Create(h.ctx, o, metav1.CreateOptions{})
	case *storagev1.CSINode:
		_, err = h.client.StorageV1().CSINodes().Create(h.ctx, o, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("cannot create %T", obj)
	}
	must(h.t, err)
}

// capacities returns the objects in the API, described, sorted.
func (h *harness) capacities() []string {
	h.t.Helper()
	list, err := h.client.StorageV1().CSIStorageCapacities(namespace).List(h.ctx, metav1.ListOptions{})
	must(h.t, err)
	var out []string
	for i := range list.Items {
		out = append(out, describe(&list.Items[i]))
	}
	slices.Sort(out)
	return out
}

func conflict(name string) error {
	return apierrors.NewConflict(storagev1.Resource("csistoragecapacities"), name, errors.New("the object has been modified"))
}

// fakeDriver answers GetCapacity like upstream's mock driver and logs each
// call as "GetCapacity <segment> <parameters>".
type fakeDriver struct {
	mu       sync.Mutex
	capacity map[string]string
	fail     int
	h        *harness
}

// GetCapacity implements CSIClient.
func (d *fakeDriver) GetCapacity(_ context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	seg := NewSegment(req.GetAccessibleTopology().GetSegments())
	d.mu.Lock()
	answer, failing := d.capacity[seg.ID()], d.fail > 0
	if failing {
		d.fail--
	}
	d.mu.Unlock()
	line := fmt.Sprintf("GetCapacity %s %v", seg, req.GetParameters())
	if failing {
		d.h.log("%s failed", line)
		return nil, fmt.Errorf("injected failure of %s", line)
	}
	d.h.log("%s", line)
	resp := &csi.GetCapacityResponse{}
	if answer != "" {
		avail, maxSize, hasMax := strings.Cut(answer, ",")
		resp.AvailableCapacity = bytesOf(avail)
		if hasMax {
			resp.MaximumVolumeSize = wrapperspb.Int64(bytesOf(maxSize))
		}
	}
	if m, ok := req.GetParameters()["multiplier"]; ok {
		n, err := strconv.Atoi(m)
		if err != nil {
			return nil, fmt.Errorf("invalid multiplier %q: %w", m, err)
		}
		resp.AvailableCapacity *= int64(n)
	}
	return resp, nil
}

func (d *fakeDriver) set(segmentID, answer string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.capacity[segmentID] = answer
}

func (d *fakeDriver) failNext(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fail += n
}

// fakeClock hands out one ticker whose ticks the test sends.
type fakeClock struct{ ticks chan time.Time }

func (c fakeClock) NewTicker(time.Duration) clock.Ticker { return fakeTicker(c) }

type fakeTicker struct{ ticks chan time.Time }

func (t fakeTicker) C() <-chan time.Time { return t.ticks }
func (t fakeTicker) Stop()               {}

// Builders of the cluster's nodes and objects.

// nodeWith is a node whose CSINode lists the driver with the labels' keys
// as topology keys.
func nodeWith(name string, labels map[string]string) []runtime.Object {
	keys := slices.Sorted(maps.Keys(labels))
	return []runtime.Object{
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: maps.Clone(labels)}},
		&storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.CSINodeSpec{
			Drivers: []storagev1.CSINodeDriver{{Name: driver, TopologyKeys: keys}}}},
	}
}

func objects(groups ...[]runtime.Object) []runtime.Object {
	var out []runtime.Object
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func classes(cs ...*storagev1.StorageClass) []runtime.Object {
	var out []runtime.Object
	for _, c := range cs {
		out = append(out, c)
	}
	return out
}

func capacityObjects(cs ...*storagev1.CSIStorageCapacity) []runtime.Object {
	var out []runtime.Object
	for _, c := range cs {
		out = append(out, c)
	}
	return out
}
