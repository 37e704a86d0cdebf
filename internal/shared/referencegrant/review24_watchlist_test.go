package referencegrant

import (
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"
)

// Review of issue 24 (commits 2e9ec88 and badda68): the grant cache streams
// its initial list and keeps cachedGrants. These tests stream grants to a
// Checker with WatchList set, as the sidecar runs it, and follow the
// decisions through deletions, expiries and cut streams.

// review24Streams is a fake API server whose watch-list answers are
// scripted: each watch returns the next stream (the last one is repeated),
// and the test keeps the streams to send later events on them.
type review24Streams struct {
	client *gatewayfake.Clientset
	mu     sync.Mutex
	script []func() *watch.FakeWatcher
	opened []*watch.FakeWatcher
}

func newReview24Streams(script ...func() *watch.FakeWatcher) *review24Streams {
	s := &review24Streams{client: gatewayfake.NewClientset(), script: script}
	s.client.PrependWatchReactor("referencegrants", func(clienttesting.Action) (bool, watch.Interface, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		next := s.script[min(len(s.opened), len(s.script)-1)]
		w := next()
		s.opened = append(s.opened, w)
		return true, w, nil
	})
	return s
}

// stream returns the n-th stream opened (from 0), once it is.
func (s *review24Streams) stream(t *testing.T, n int) *watch.FakeWatcher {
	t.Helper()
	var w *watch.FakeWatcher
	waitUntil(t, "the stream is opened", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.opened) > n {
			w = s.opened[n]
		}
		return w != nil
	})
	return w
}

// count is how many streams the server was asked for.
func (s *review24Streams) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.opened)
}

// initialEvents is a stream that sends grants and then, unless cut, the
// bookmark that ends the initial events at resourceVersion rv; it stays
// open for later events unless cut.
func initialEvents(rv string, cut bool, grants ...*gatewayv1.ReferenceGrant) func() *watch.FakeWatcher {
	return func() *watch.FakeWatcher {
		w := watch.NewFakeWithChanSize(len(grants)+1, false)
		for _, g := range grants {
			w.Add(g.DeepCopy())
		}
		if cut {
			w.Stop()
			return w
		}
		w.Action(watch.Bookmark, &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv,
			Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
		return w
	}
}

// atVersion is rg at resourceVersion rv.
func atVersion(rg *gatewayv1.ReferenceGrant, rv string) *gatewayv1.ReferenceGrant {
	rg = rg.DeepCopy()
	rg.ResourceVersion = rv
	return rg
}

// runStreamingChecker runs a Checker with WatchList set on s until the
// test ends.
func runStreamingChecker(t *testing.T, s *review24Streams) (*Checker, *changes) {
	t.Helper()
	return runChecker(t, s.client, servedVersions("v1"), func(c *Config) { c.WatchList = true })
}

// TestReview24StreamedGrantFollowsLaterEvents: a grant streamed in the
// initial events allows; set terminating afterwards it allows nothing, and
// re-queues its namespace; deleted, it still allows nothing.
func TestReview24StreamedGrantFollowsLaterEvents(t *testing.T) {
	rg := atVersion(v1Grant(grant(claimsFromTest, fooBackup)), "5")
	s := newReview24Streams(initialEvents("10", false, rg))
	checker, changed := runStreamingChecker(t, s)
	decidesAs(t, checker, claimUsesSnapshot(), ReasonAllowed)

	withdrawn := atVersion(rg, "11")
	withdrawn.Finalizers = []string{"example.com/gitops"}
	withdrawn.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	s.stream(t, 0).Modify(withdrawn)
	decidesAs(t, checker, claimUsesSnapshot(), ReasonNotGranted)
	waitUntil(t, `OnChange("prod") is called for the terminating grant`, func() bool { return changed.count("prod") >= 1 })

	s.stream(t, 0).Delete(atVersion(withdrawn, "12"))
	waitUntil(t, `OnChange("prod") is called for the deletion`, func() bool { return changed.count("prod") >= 2 })
	if d := checker.Check(claimUsesSnapshot()); d.Reason != ReasonNotGranted {
		t.Errorf("Check() = %+v after the deletion, want not granted", d)
	}
}

// TestReview24GrantDeletedWhileTheWatchWasLostIsDroppedByTheNewStream: the
// watch expires (410) and the grant is deleted before the reflector streams
// again; the new stream no longer holds it, so the cache drops it (a
// tombstone holding a cachedGrant reaches the handler) and the namespace
// is re-queued.
func TestReview24GrantDeletedWhileTheWatchWasLostIsDroppedByTheNewStream(t *testing.T) {
	rg := atVersion(v1Grant(grant(claimsFromTest, fooBackup)), "5")
	s := newReview24Streams(initialEvents("10", false, rg), initialEvents("20", false))
	checker, changed := runStreamingChecker(t, s)
	decidesAs(t, checker, claimUsesSnapshot(), ReasonAllowed)

	s.stream(t, 0).Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
	decidesAs(t, checker, claimUsesSnapshot(), ReasonNotGranted)
	waitUntil(t, `OnChange("prod") is called for the grant the new stream dropped`, func() bool { return changed.seen("prod") })
	for _, a := range s.client.Actions() {
		if a.GetVerb() == "list" {
			t.Errorf("the informer listed (%v), want it to stream again", a)
		}
	}
}

// TestReview24CutStreamsAreUnavailableNotDenied: while every stream is cut
// before its bookmark, the grants cannot be read: a reference is
// unavailable (retried), never denied from what the cut stream delivered,
// even when that would deny.
func TestReview24CutStreamsAreUnavailableNotDenied(t *testing.T) {
	other := atVersion(v1Grant(grant(named("other"), claimsFromTest, to("", "Secret", ""))), "5")
	s := newReview24Streams(func() *watch.FakeWatcher {
		time.Sleep(time.Millisecond) // the reflector asks again at once: keep the test cheap
		return initialEvents("", true, other)()
	})
	checker, _ := runStreamingChecker(t, s)
	waitUntil(t, "a few streams were cut", func() bool { return s.count() >= 3 })
	if d := checker.Check(claimUsesSnapshot()); d.Reason != ReasonUnavailable {
		t.Errorf("Check() = %+v, want unavailable while no stream has ended its initial events", d)
	}
}
