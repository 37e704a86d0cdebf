package referencegrant

// REVIEW24B FINDING A: the ReferenceGrant version the cache reads stops
// being served while the other one is. Helpers in review24b_cache_test.go.

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"
)

// TestReview24bAVersionNoLongerServedGivesWayToTheOneServed:
// ReferenceGrants were read through v1 (both versions served); then v1 is
// no longer served (a Gateway API CRD rolled back to a release without
// it; in the other direction, a release that stops serving v1beta1 after
// the checker chose it). The cache that read v1 stops answering, as it
// must. But the grant is still there through v1beta1, and Config says the
// checker reads "v1 when served, v1beta1 otherwise".
func TestReview24bAVersionNoLongerServedGivesWayToTheOneServed(t *testing.T) {
	g := grant(claimsFromTest, fooBackup)
	client := gatewayfake.NewClientset(review24bAt(g, "5", "1"), v1beta1Grant(g))
	v1Watches := review24bWatch(client, "v1")
	disc := servedVersions("v1", "v1beta1")
	checker, _ := runChecker(t, client, disc)
	decidesAs(t, checker, claimUsesSnapshot(), ReasonAllowed)

	disc.serve("v1beta1")
	v1Watches.unserve(t)
	// REVIEW24B FINDING A: optionalapi.API.Run discovered the served version
	// once; when the synced version stopped being served it rebuilt an
	// informer of that same version, whose list answers NotFound for ever.
	// Every claim that needs a grant waited (ReasonGrantUnavailable: safe,
	// nothing stale is allowed) until the sidecar was restarted, although
	// v1beta1 serves the grant, and the message said the CRD may not be
	// installed. Run now asks discovery again. (The cache is unusable
	// between the two informers; how long that lasts is a matter of
	// timing, so this test does not look for it.)
	var d Decision
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, eventually, true, func(context.Context) (bool, error) {
		d = checker.Check(claimUsesSnapshot())
		return d.Allowed, nil
	})
	if err != nil || d.Grant != "prod/bar" {
		t.Errorf("%s after v1 stopped being served, Check() = %+v; want allowed by prod/bar through v1beta1", eventually, d)
	}
}

// unserve makes the version gone: its lists and watches answer NotFound
// and its open watch ends, as when a CRD version is set served: false.
func (w *review24bWatches) unserve(t *testing.T) {
	t.Helper()
	fw := w.current(t)
	w.mu.Lock()
	w.gone = true
	w.mu.Unlock()
	fw.Stop()
}
