package referencegrant

// Adversarial review of issue 24 (commit badda68): the cache keeps a grant
// as its Grant and resourceVersion only, without UID or other metadata.
// These tests look for a revoked grant that keeps allowing: a grant
// deleted and re-created under its name while the watch was down, and
// updates of metadata only (review24b_versionswitch_test.go: the API
// version the cache reads going away).

import (
	"context"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"
)

// review24bWatches hands the checker's watches of ReferenceGrants in one
// API version out as fake watchers the test drives; lists read the fake
// clientset, and answer NotFound (with the watches) once the version is
// no longer served.
type review24bWatches struct {
	version string
	mu      sync.Mutex
	opened  []*watch.FakeWatcher
	gone    bool
}

func review24bWatch(client *gatewayfake.Clientset, version string) *review24bWatches {
	w := &review24bWatches{version: version}
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: gatewayv1.GroupName, Resource: "referencegrants"}, "")
	client.PrependReactor("list", "referencegrants", func(a clienttesting.Action) (bool, runtime.Object, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		return a.GetResource().Version == w.version && w.gone, nil, notFound
	})
	client.PrependWatchReactor("referencegrants", func(a clienttesting.Action) (bool, watch.Interface, error) {
		if a.GetResource().Version != w.version {
			return false, nil, nil
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.gone {
			return true, nil, notFound
		}
		fw := watch.NewFakeWithChanSize(10, false)
		w.opened = append(w.opened, fw)
		return true, fw, nil
	})
	return w
}

// current is the watch opened last, once there is one.
func (w *review24bWatches) current(t *testing.T) *watch.FakeWatcher {
	t.Helper()
	var fw *watch.FakeWatcher
	waitUntil(t, "the informer watches "+w.version, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		if n := len(w.opened); n > 0 {
			fw = w.opened[n-1]
		}
		return fw != nil
	})
	return fw
}

// review24bAt is g as a v1 object at resourceVersion rv with uid.
func review24bAt(g Grant, rv, uid string) *gatewayv1.ReferenceGrant {
	rg := v1Grant(g)
	rg.ResourceVersion, rg.UID = rv, types.UID("uid-"+uid)
	return rg
}

// TestReview24bGrantRecreatedUnderItsNameWhileTheWatchWasDown is a
// hypothesis checked and found safe: the grant prod/bar allowing
// foo-backup is deleted and created again under its name allowing another
// snapshot only, while the watch is down (410 Gone). The cache keeps no
// UID, and needs none: the relist replaces what it holds under the key
// prod/bar, the reference is refused, and the namespace is re-queued (an
// update: the resourceVersion changed; with the informer's resync period
// 0, as here, an update of the same resourceVersion would be told too).
func TestReview24bGrantRecreatedUnderItsNameWhileTheWatchWasDown(t *testing.T) {
	old := review24bAt(grant(claimsFromTest, fooBackup), "5", "1")
	client := gatewayfake.NewClientset(old)
	watches := review24bWatch(client, "v1")
	checker, changed := runChecker(t, client, servedVersions("v1"))
	decidesAs(t, checker, claimUsesSnapshot(), ReasonAllowed)
	w := watches.current(t)
	before := changed.count("prod")

	ctx := context.Background()
	if err := client.GatewayV1().ReferenceGrants("prod").Delete(ctx, "bar", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	other := func(r *Reference) { r.ToName = "other" }
	recreated := review24bAt(grant(claimsFromTest, to(snapshotGroup, snapshotKind, "other")), "9", "2")
	if _, err := client.GatewayV1().ReferenceGrants("prod").Create(ctx, recreated, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)

	decidesAs(t, checker, claimUsesSnapshot(), ReasonNotGranted)
	decidesAs(t, checker, claimUsesSnapshot(other), ReasonAllowed)
	waitUntil(t, `OnChange("prod") is called for the re-created grant`, func() bool { return changed.count("prod") > before })
}

// TestReview24bMetadataOnlyUpdates is a hypothesis checked and found safe:
// an update of labels and annotations leaves the answer; one that only
// sets the deletionTimestamp (a finalizer holds the grant) withdraws it and
// re-queues its namespace, though the cache keeps no metadata but the
// resourceVersion; and the grant re-created after it allows again.
func TestReview24bMetadataOnlyUpdates(t *testing.T) {
	g := grant(claimsFromTest, fooBackup)
	client := gatewayfake.NewClientset(review24bAt(g, "5", "1"))
	watches := review24bWatch(client, "v1")
	checker, changed := runChecker(t, client, servedVersions("v1"))
	decidesAs(t, checker, claimUsesSnapshot(), ReasonAllowed)
	w := watches.current(t)

	labeled := review24bAt(g, "6", "1")
	labeled.Labels, labeled.Annotations = map[string]string{"team": "storage"}, map[string]string{"note": "x"}
	w.Modify(labeled)
	waitUntil(t, `OnChange("prod") is called for the labeled grant`, func() bool { return changed.count("prod") >= 1 })
	if d := checker.Check(claimUsesSnapshot()); d.Reason != ReasonAllowed {
		t.Fatalf("Check() = %+v after a label changed, want still allowed", d)
	}

	terminating := review24bAt(g, "7", "1")
	terminating.Finalizers = []string{"example.com/gitops"}
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	w.Modify(terminating)
	decidesAs(t, checker, claimUsesSnapshot(), ReasonNotGranted)
	waitUntil(t, `OnChange("prod") is called for the terminating grant`, func() bool { return changed.count("prod") >= 2 })

	w.Delete(review24bAt(g, "8", "1"))
	w.Add(review24bAt(g, "9", "2"))
	decidesAs(t, checker, claimUsesSnapshot(), ReasonAllowed)
	waitUntil(t, `OnChange("prod") is called for the deletion and the new grant`, func() bool { return changed.count("prod") >= 4 })
}
