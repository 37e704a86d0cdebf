package optionalapi

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"
)

// Review of issue 24 (commits 2e9ec88 and 22f9f57): the optional APIs'
// informers stream their initial lists. These tests drive a fake API server
// whose watch-list streams misbehave (cut, never ended, broken mid-way,
// refused) and check what Informer answers and what the server is asked.

// review24Grant is a ReferenceGrant prod/name at resourceVersion rv.
func review24Grant(name, rv string) *gatewayv1.ReferenceGrant {
	return &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: name, ResourceVersion: rv}}
}

// review24EndOfInitialEvents is the bookmark that ends a watch-list stream.
func review24EndOfInitialEvents(rv string) *gatewayv1.ReferenceGrant {
	return &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv,
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
}

// review24Server counts what a fake API server is asked: watch-list
// streams (watches with sendInitialEvents), plain watches, full lists and
// lists of one object (Run's permission checks). stream answers each
// watch-list request; plain and list answer the others (nil: the fake's
// tracker answers).
type review24Server struct {
	client                                *gatewayfake.Clientset
	streams, watches, fullLists, oneLists atomic.Int32
}

func newReview24Server(stream func() (watch.Interface, error), plain func() (watch.Interface, error),
	list func() error, objects ...runtime.Object) *review24Server {
	s := &review24Server{client: gatewayfake.NewClientset(objects...)}
	s.client.PrependReactor("list", "referencegrants", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.(clienttesting.ListActionImpl).ListOptions.Limit == 1 {
			s.oneLists.Add(1)
		} else {
			s.fullLists.Add(1)
		}
		if list != nil {
			if err := list(); err != nil {
				return true, nil, err
			}
		}
		return false, nil, nil
	})
	s.client.PrependWatchReactor("referencegrants", func(a clienttesting.Action) (bool, watch.Interface, error) {
		if ptr.Deref(a.(clienttesting.WatchActionImpl).ListOptions.SendInitialEvents, false) {
			s.streams.Add(1)
			w, err := stream()
			return true, w, err
		}
		s.watches.Add(1)
		if plain == nil {
			return true, watch.NewFake(), nil
		}
		w, err := plain()
		return true, w, err
	})
	return s
}

// api is the server's ReferenceGrant API with WatchList set, its refusals
// re-checked on clock.
func (s *review24Server) api(clock Clock) *API {
	return New(Config{Name: "ReferenceGrant", Discovery: newDiscovery(v1Grants), Candidates: grantCandidates(s.client)[:1],
		PollInterval: 10 * time.Millisecond, RetryRefused: time.Minute, RetryRefusedMax: 4 * time.Minute,
		Clock: clock, WatchList: true})
}

// TestReview24StreamCutBeforeItsBookmarkIsRetriedWithBackoff: a watch-list
// stream that ends before the bookmark that closes its initial events (a
// connection reset mid-stream: client-go's stream watcher then closes the
// channel without an error event) must be asked again with a backoff, as a
// failed list is (the reflector waits 0.8 s, then twice as long each time):
// on a real API server each stream is a consistent read of every object,
// as costly as a LIST. client-go's Reflector.watchList loop asks again at
// once when a stream ends without the bookmark and without an error
// (kubernetes/kubernetes#140890, fix proposed in #140902), so since 2e9ec88
// an optional API whose streams are cut sends thousands of full streams a
// second; before it, the cut list failed and the reflector backed off.
// (The core informers share client-go's loop.) The reflector's clock cannot
// be set through Config, hence the real second.
func TestReview24StreamCutBeforeItsBookmarkIsRetriedWithBackoff(t *testing.T) {
	s := newReview24Server(func() (watch.Interface, error) {
		w := watch.NewFakeWithChanSize(1, false)
		w.Add(review24Grant("bar", "5"))
		w.Stop() // cut before the bookmark
		return w, nil
	}, nil, nil)
	api := s.api(newManualClock())
	start(t, api)

	time.Sleep(time.Second) // the reflector's backoff runs on the real clock
	if _, _, err := api.Informer(); !errors.Is(err, ErrNotSynced) {
		t.Errorf("Informer() error = %v, want ErrNotSynced while no stream has ended its initial events", err)
	}
	if n := s.streams.Load(); n > 5 {
		t.Errorf("the server was asked for %d watch-list streams in one second, want a handful (the reflector's backoff)", n)
	}
}

// TestReview24StreamWithoutItsBookmarkNeverSyncs: an API server that
// ignores sendInitialEvents sends the objects as a plain watch does, and
// perhaps bookmarks, but never the bookmark that ends the initial events.
// The cache must then never count as synced (the stream may not have
// delivered every object), and nothing is listed behind its back.
func TestReview24StreamWithoutItsBookmarkNeverSyncs(t *testing.T) {
	s := newReview24Server(func() (watch.Interface, error) {
		w := watch.NewFakeWithChanSize(2, false)
		w.Add(review24Grant("bar", "5"))
		w.Action(watch.Bookmark, &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "6"}})
		return w, nil // left open
	}, nil, nil)
	api := s.api(newManualClock())
	start(t, api)

	waitUntil(t, "the stream is open", func() bool { return s.streams.Load() > 0 })
	time.Sleep(200 * time.Millisecond)
	if _, _, err := api.Informer(); !errors.Is(err, ErrNotSynced) {
		t.Errorf("Informer() error = %v, want ErrNotSynced: the initial events never ended", err)
	}
	select {
	case <-api.Settled():
		t.Errorf("the API settled, want no answer while its first stream has not ended")
	default:
	}
	if n := s.fullLists.Load(); n != 0 {
		t.Errorf("the informer listed %d times, want none", n)
	}
}

// TestReview24ErrorEventMidStreamNeverLeaksThePartialStream: a stream that
// breaks with an error event before its bookmark is discarded; the
// reflector falls back to a list, and the cache holds what the list
// returned, not what the broken stream had delivered (a grant deleted
// since).
func TestReview24ErrorEventMidStreamNeverLeaksThePartialStream(t *testing.T) {
	s := newReview24Server(func() (watch.Interface, error) {
		w := watch.NewFakeWithChanSize(2, false)
		w.Add(review24Grant("deleted", "5"))
		w.Error(&apierrors.NewInternalError(errors.New("etcd is unhappy")).ErrStatus)
		return w, nil
	}, nil, nil, review24Grant("kept", "7"))
	api := s.api(newManualClock())
	start(t, api)

	waitUntil(t, "the cache syncs", func() bool { return available(api) })
	inf, _, _ := api.Informer()
	keys := inf.GetStore().ListKeys()
	if len(keys) != 1 || keys[0] != "prod/kept" {
		t.Errorf("the cache holds %q, want only prod/kept, which the list returned", keys)
	}
	if n := s.fullLists.Load(); n != 1 {
		t.Errorf("the informer listed %d times, want once, after the broken stream", n)
	}
}

// TestReview24UpstreamRBACListsOnceWhateverTheChecks: with upstream's RBAC
// on contents (list, no watch) the refused stream falls back to one full
// list; after the refusal, Run's checks list one object each and open no
// stream, however many there are.
func TestReview24UpstreamRBACListsOnceWhateverTheChecks(t *testing.T) {
	refuse := func() (watch.Interface, error) { return nil, forbidden("watch") }
	s := newReview24Server(refuse, refuse, nil, review24Grant("bar", "5"))
	clock := newManualClock()
	api := s.api(clock)
	start(t, api)

	refusedWith(t, api, "cannot watch gateway.networking.k8s.io/v1/referencegrants: forbidden: grant watch on")
	waits(t, clock, 4)
	if got := [3]int32{s.streams.Load(), s.fullLists.Load(), s.oneLists.Load()}; got != [3]int32{1, 1, 4} {
		t.Errorf("streams, full lists, lists of one = %v, want [1 1 4]: one informer, then four checks", got)
	}
}

// TestReview24RejectedCredentialsAreOneRefusal: when the API server rejects
// the sidecar's credentials (401), the refused stream is not recorded, but
// the list that follows is: the informer stops after one list attempt, and
// the message says the credentials, not an RBAC rule, are the problem.
func TestReview24RejectedCredentialsAreOneRefusal(t *testing.T) {
	unauthorized := apierrors.NewUnauthorized("token has expired")
	s := newReview24Server(func() (watch.Interface, error) { return nil, unauthorized }, nil,
		func() error { return unauthorized })
	clock := newManualClock()
	api := s.api(clock)
	start(t, api)

	refusedWith(t, api, "cannot list gateway.networking.k8s.io/v1/referencegrants: forbidden: the API server does not accept this sidecar's credentials")
	waits(t, clock, 3)
	if streams, lists, checks := s.streams.Load(), s.fullLists.Load(), s.oneLists.Load(); streams != 1 || lists > 1 || checks != 3 {
		t.Errorf("streams, full lists, lists of one = %d, %d, %d, want 1, at most 1, 3", streams, lists, checks)
	}
	if _, _, err := api.Informer(); err == nil || !strings.Contains(err.Error(), "token has expired") {
		t.Errorf("Informer() error = %v, want the API server's reason", err)
	}
}

// TestReview24RefusedStreamOfASyncedCacheStopsServingIt: once synced, a
// stream refused when the reflector streams again (its watch expired, and
// list and watch were withdrawn meanwhile) must stop the cache from being
// served: the list it falls back to is refused and recorded.
func TestReview24RefusedStreamOfASyncedCacheStopsServingIt(t *testing.T) {
	api, _ := review24SyncedThenWithdrawn(t, forbidden("list"))
	refusedWith(t, api, "cannot list gateway.networking.k8s.io/v1/referencegrants: forbidden")
}

// review24SyncedThenWithdrawn starts a ReferenceGrant API whose first
// stream syncs it, then withdraws list and watch and expires that stream:
// every later stream is refused, and every full list answers listErr.
func review24SyncedThenWithdrawn(t *testing.T, listErr error) (*API, *review24Server) {
	t.Helper()
	var withdrawn atomic.Bool
	var first atomic.Pointer[watch.FakeWatcher]
	s := newReview24Server(func() (watch.Interface, error) {
		if withdrawn.Load() {
			return nil, forbidden("watch")
		}
		w := watch.NewFakeWithChanSize(2, false)
		w.Add(review24Grant("bar", "5"))
		w.Action(watch.Bookmark, review24EndOfInitialEvents("10"))
		first.Store(w)
		return w, nil
	}, nil, func() error {
		if withdrawn.Load() {
			return listErr
		}
		return nil
	})
	api := s.api(newManualClock())
	start(t, api)
	waitUntil(t, "the cache syncs", func() bool { return available(api) })
	withdrawn.Store(true)
	first.Load().Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
	return api, s
}

// TestReview24RefusedStreamIsNotForgottenWhenTheListFailsOtherwise: a
// synced cache whose watch expired streams again; list and watch have been
// withdrawn meanwhile, so the stream is refused, and the list it falls back
// to is throttled (429: API Priority and Fairness answers before
// authorization does) or times out, as a list of tens of thousands of
// objects may. The API server has refused the informer, so the cache must
// stop being served (Informer's contract: "A synced cache stops being
// usable when the API server refuses to list or watch it"); since 22f9f57
// the refused stream is forgotten and the stale cache stays in use for as
// long as the lists fail, allowing what a grant deleted meanwhile allowed.
func TestReview24RefusedStreamIsNotForgottenWhenTheListFailsOtherwise(t *testing.T) {
	api, s := review24SyncedThenWithdrawn(t, apierrors.NewTooManyRequests("the server is busy", 1))
	waitUntil(t, "the reflector streams again", func() bool { return s.streams.Load() >= 2 })
	if !review24Within(2*time.Second, func() bool {
		_, _, err := api.Informer()
		return errors.Is(err, ErrForbidden)
	}) {
		_, _, err := api.Informer()
		t.Errorf("Informer() error = %v after %d refused streams and %d throttled lists, want ErrForbidden: "+
			"the API server refused the stream and no list has succeeded since", err, s.streams.Load()-1, s.fullLists.Load())
	}
}

// review24Within polls cond for at most d, for a condition that should
// hold at once but may not hold at all.
func review24Within(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}
