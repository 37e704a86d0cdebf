package optionalapi

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"
)

// refusingServer is a fake API server whose RBAC forbids the list or the
// watch of ReferenceGrants while the test says so. It hands out fake
// watches the test can end.
type refusingServer struct {
	client                         *gatewayfake.Clientset
	forbidList, forbidWatch        atomic.Bool
	mu                             sync.Mutex
	lastWatch                      *watch.FakeWatcher
	refusedCalls, synced, refusals atomic.Int32
}

func forbidden(verb string) *apierrors.StatusError {
	return apierrors.NewForbidden(schema.GroupResource{Group: gatewayv1.GroupName, Resource: "referencegrants"}, "",
		errors.New(`User "system:serviceaccount:kube-system:csi-provisioner" cannot `+verb+` resource "referencegrants"`))
}

func newRefusingServer() *refusingServer {
	s := &refusingServer{client: gatewayfake.NewClientset(&gatewayv1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "bar"},
	})}
	// The reactors are added before Run starts: the fake's reactor chain
	// is not safe to change while it is used.
	s.client.PrependReactor("list", "referencegrants", func(clienttesting.Action) (bool, runtime.Object, error) {
		if s.forbidList.Load() {
			return true, nil, forbidden("list")
		}
		return false, nil, nil
	})
	s.client.PrependWatchReactor("referencegrants", func(clienttesting.Action) (bool, watch.Interface, error) {
		if s.forbidWatch.Load() {
			return true, nil, forbidden("watch")
		}
		w := watch.NewFake()
		s.mu.Lock()
		s.lastWatch = w
		s.mu.Unlock()
		return true, w, nil
	})
	return s
}

// start runs the API of the server's ReferenceGrants until the test ends,
// checked again after 1, 2 and then every 4 minutes of the returned clock
// while refused. It returns what Run logs too.
func (s *refusingServer) start(t *testing.T) (*API, *manualClock, ktesting.Buffer) {
	t.Helper()
	clock := newManualClock()
	api := New(Config{
		Name:            "ReferenceGrant",
		Discovery:       newDiscovery(v1Grants),
		Candidates:      grantCandidates(s.client)[:1],
		PollInterval:    10 * time.Millisecond,
		RetryRefused:    time.Minute,
		RetryRefusedMax: 4 * time.Minute,
		Clock:           clock,
		WhileRefused:    "claims that need a grant wait",
		OnSynced:        func(Candidate) { s.synced.Add(1) },
		OnRefused:       func(Candidate) { s.refusals.Add(1) },
	})
	return api, clock, start(t, api)
}

// requests counts what the server was asked: full lists (an informer's),
// lists of one object (Run's checks) and watches.
type requests struct{ lists, checks, watches int }

func (s *refusingServer) requests() requests {
	var r requests
	for _, a := range s.client.Actions() {
		switch a := a.(type) {
		case clienttesting.ListActionImpl:
			if a.ListOptions.Limit == 1 {
				r.checks++
			} else {
				r.lists++
			}
		case clienttesting.WatchActionImpl:
			r.watches++
		}
	}
	return r
}

// informerWatch is the informer's open watch, nil while there is none.
func (s *refusingServer) informerWatch() *watch.FakeWatcher {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastWatch == nil || s.lastWatch.IsStopped() {
		return nil // none yet, or a check's, stopped at once
	}
	return s.lastWatch
}

// withdraw waits until the informer is synced and watching, then withdraws
// a permission (forbid is forbidList or forbidWatch) and ends the watch
// with a refusal, so the informer's reflector asks again and is refused.
func (s *refusingServer) withdraw(t *testing.T, api *API, forbid *atomic.Bool) {
	t.Helper()
	waitUntil(t, "the informer watches", func() bool { return available(api) && s.informerWatch() != nil })
	forbid.Store(true)
	s.informerWatch().Error(&forbidden("watch").ErrStatus)
}

// regrant gives a withdrawn permission back and ends Run's wait w, then
// waits until Run's check has started a new informer and it has synced.
func (s *refusingServer) regrant(t *testing.T, api *API, forbid *atomic.Bool, w *manualTimer) {
	t.Helper()
	forbid.Store(false)
	w.fire()
	waitUntil(t, "the API is available again", func() bool { return available(api) })
}

// refusedWith waits until Informer reports ErrForbidden with a message
// containing want.
func refusedWith(t *testing.T, api *API, want string) {
	t.Helper()
	waitUntil(t, "Informer reports the refusal", func() bool {
		_, _, err := api.Informer()
		return errors.Is(err, ErrForbidden) && strings.Contains(err.Error(), want)
	})
}

// waits fires n of Run's waits and returns their durations. When it
// returns, Run has checked the permission after each and started the next
// wait, which it returns too.
func waits(t *testing.T, clock *manualClock, n int) ([]time.Duration, *manualTimer) {
	t.Helper()
	var got []time.Duration
	w := clock.nextWait(t)
	for range n {
		got = append(got, w.d)
		w.fire()
		w = clock.nextWait(t)
	}
	return got, w
}

// errorLogs counts the error entries of log whose message contains part.
func errorLogs(log ktesting.Buffer, part string) int {
	n := 0
	for _, e := range log.Data() {
		if e.Type == ktesting.LogError && strings.Contains(e.Message, part) {
			n++
		}
	}
	return n
}

// TestRefusedInformerIsCheckedWithBackoffThenResumes: a refused informer
// costs one list, then Run only checks the permission with a list of one
// object (and a watch, if the list is allowed), at growing intervals, and
// logs the refusal once. Once it is allowed, a new informer lists and
// syncs, without a restart.
func TestRefusedInformerIsCheckedWithBackoffThenResumes(t *testing.T) {
	tests := []struct {
		name    string
		forbid  func(*refusingServer) *atomic.Bool
		message string
		want    requests
	}{
		{
			name:    "upstream's RBAC, list allowed and watch forbidden, asks for watch; each check lists one object and watches",
			forbid:  func(s *refusingServer) *atomic.Bool { return &s.forbidWatch },
			message: "cannot watch gateway.networking.k8s.io/v1/referencegrants: forbidden: grant watch on referencegrants.gateway.networking.k8s.io",
			want:    requests{lists: 1, checks: 5, watches: 6},
		},
		{
			name:    "list forbidden asks for every verb the cache needs; nothing is watched",
			forbid:  func(s *refusingServer) *atomic.Bool { return &s.forbidList },
			message: "cannot list gateway.networking.k8s.io/v1/referencegrants: forbidden: grant get, list and watch on referencegrants.gateway.networking.k8s.io",
			want:    requests{lists: 1, checks: 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newRefusingServer()
			tt.forbid(s).Store(true)
			api, clock, log := s.start(t)
			refusedWith(t, api, tt.message)

			got, next := waits(t, clock, 5)
			if want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 4 * time.Minute, 4 * time.Minute}; !slices.Equal(got, want) {
				t.Errorf("waits between checks = %v, want %v", got, want)
			}
			if got := s.requests(); got != tt.want {
				t.Errorf("after five checks the server got %+v, want %+v", got, tt.want)
			}
			if n := errorLogs(log, "refuses the informer"); n != 1 {
				t.Errorf("the refusal was logged %d times as an error, want once", n)
			}
			if n := s.refusals.Load(); n != 1 {
				t.Errorf("OnRefused called %d times, want once", n)
			}

			s.regrant(t, api, tt.forbid(s), next) // the cluster admin fixes the RBAC
			waitUntil(t, "OnSynced announces it", func() bool { return s.synced.Load() >= 1 })
			if got := s.requests().lists; got != tt.want.lists+1 {
				t.Errorf("full lists = %d, want %d: one more by the new informer", got, tt.want.lists+1)
			}
		})
	}
}

// TestLostWatchStopsServingTheCache: once synced, a cache whose watch ends
// and whose relist is refused (RBAC withdrawn) must not keep answering from
// its last copy: the owner may have deleted what it still shows. It is
// usable again after a complete list.
func TestLostWatchStopsServingTheCache(t *testing.T) {
	s := newRefusingServer()
	api, clock, _ := s.start(t)
	s.withdraw(t, api, &s.forbidList)
	refusedWith(t, api, "cannot list")

	s.regrant(t, api, &s.forbidList, clock.nextWait(t))
	waitUntil(t, "OnSynced announces it again", func() bool { return s.synced.Load() == 2 })
}

// TestBackoffStartsAgainAfterALongHealthyRun: a refusal soon after the
// informer resumed continues the series of growing waits; one after it ran
// for the longest wait starts it again.
func TestBackoffStartsAgainAfterALongHealthyRun(t *testing.T) {
	s := newRefusingServer()
	api, clock, _ := s.start(t)
	refuseTheWatch := func() *manualTimer {
		t.Helper()
		s.withdraw(t, api, &s.forbidWatch)
		return clock.nextWait(t)
	}

	first := refuseTheWatch()
	first.fire() // still refused
	second := clock.nextWait(t)
	s.regrant(t, api, &s.forbidWatch, second)
	soon := refuseTheWatch()
	s.regrant(t, api, &s.forbidWatch, soon)
	clock.advance(4 * time.Minute)
	late := refuseTheWatch()

	got := []time.Duration{first.d, second.d, soon.d, late.d}
	if want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, time.Minute}; !slices.Equal(got, want) {
		t.Errorf("waits = %v, want %v", got, want)
	}
}
