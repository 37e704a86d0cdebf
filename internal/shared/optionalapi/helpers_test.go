package optionalapi

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	gatewayclientset "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/xns-csi/csi-provisioner/test/discoverytest"
)

// eventually is how long tests wait for something that happens
// asynchronously. It is generous on purpose: it bounds a failure, not the
// speed of a success. The reflector's first retry after a failed list comes
// 0.8-1.6s later, the next one 1.6-3.2s later.
const eventually = 30 * time.Second

// waitUntil polls cond until it holds or the test's patience runs out.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, eventually, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting until %s", what)
	}
}

// discoveryStub is the discovery Run polls; tests change what it serves
// while Run runs.
type discoveryStub struct{ *discoverytest.Discovery }

func newDiscovery(served ...*metav1.APIResourceList) *discoveryStub {
	return &discoveryStub{discoverytest.New(served...)}
}

// serve replaces what the API server serves.
func (d *discoveryStub) serve(served ...*metav1.APIResourceList) { d.Serve(served...) }

var (
	v1Grants      = discoverytest.Resources("gateway.networking.k8s.io/v1", "referencegrants", "gateways")
	v1Gateways    = discoverytest.Resources("gateway.networking.k8s.io/v1", "gateways")
	v1beta1Grants = discoverytest.Resources("gateway.networking.k8s.io/v1beta1", "referencegrants")
)

// grantCandidates are the ReferenceGrant versions, v1 preferred, listed
// and watched through client.
func grantCandidates(client gatewayclientset.Interface) []Candidate {
	return []Candidate{
		{
			GroupVersion: schema.GroupVersion{Group: gatewayv1.GroupName, Version: "v1"},
			Resource:     "referencegrants",
			Object:       &gatewayv1.ReferenceGrant{},
			ListWatch: func() *cache.ListWatch {
				grants := client.GatewayV1().ReferenceGrants(metav1.NamespaceAll)
				return NewListWatch(grants.List, grants.Watch)
			},
		},
		{
			GroupVersion: schema.GroupVersion{Group: gatewayv1beta1.GroupName, Version: "v1beta1"},
			Resource:     "referencegrants",
			Object:       &gatewayv1beta1.ReferenceGrant{},
			ListWatch: func() *cache.ListWatch {
				grants := client.GatewayV1beta1().ReferenceGrants(metav1.NamespaceAll)
				return NewListWatch(grants.List, grants.Watch)
			},
		},
	}
}

// start runs api until the test ends and waits for Run to return. It
// returns what Run logs.
func start(t *testing.T, api *API) ktesting.Buffer {
	t.Helper()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	done := make(chan struct{})
	go func() {
		defer close(done)
		api.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return logger.GetSink().(ktesting.Underlier).GetBuffer()
}

// manualClock times Run's waits between checks of a refused API: the test
// receives each wait Run starts (nextWait) and ends it when it chooses
// (fire), which moves the clock forward by the wait's duration.
type manualClock struct {
	mu    sync.Mutex
	now   time.Time
	waits chan *manualTimer
}

func newManualClock() *manualClock {
	return &manualClock{now: time.Unix(0, 0), waits: make(chan *manualTimer, 100)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// advance moves the clock forward without ending any wait.
func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *manualClock) NewTimer(d time.Duration) clock.Timer {
	w := &manualTimer{clock: c, d: d, c: make(chan time.Time, 1)}
	c.waits <- w
	return w
}

// nextWait returns the next wait Run starts, once it has started it: what
// Run did before it (a check of the permission) is over.
func (c *manualClock) nextWait(t *testing.T) *manualTimer {
	t.Helper()
	select {
	case w := <-c.waits:
		return w
	case <-time.After(eventually):
		t.Fatal("Run never started waiting")
		return nil
	}
}

// manualTimer is one wait of Run.
type manualTimer struct {
	clock *manualClock
	d     time.Duration
	c     chan time.Time
}

func (w *manualTimer) C() <-chan time.Time { return w.c }

func (w *manualTimer) Stop() bool { return true }

func (w *manualTimer) Reset(time.Duration) bool { panic("Run does not reset its timers") }

// fire ends the wait.
func (w *manualTimer) fire() {
	w.clock.advance(w.d)
	w.c <- w.clock.Now()
}
