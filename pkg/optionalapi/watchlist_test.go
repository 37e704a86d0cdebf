package optionalapi

import (
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"
)

// streamingServer answers every watch of ReferenceGrants as the API server
// answers a watch-list request: the grants, then the bookmark that ends
// the initial events. It counts the lists it is asked for.
func streamingServer(grants ...*gatewayv1.ReferenceGrant) (*gatewayfake.Clientset, *atomic.Int32) {
	client := gatewayfake.NewClientset()
	lists := &atomic.Int32{}
	client.PrependReactor("list", "referencegrants", func(clienttesting.Action) (bool, runtime.Object, error) {
		lists.Add(1)
		return false, nil, nil
	})
	client.PrependWatchReactor("referencegrants", func(clienttesting.Action) (bool, watch.Interface, error) {
		w := watch.NewFakeWithChanSize(len(grants)+1, false)
		for _, g := range grants {
			w.Add(g)
		}
		w.Action(watch.Bookmark, &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "10",
			Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
		return true, w, nil
	})
	return client, lists
}

// TestWatchListStreamsTheInitialList: with Config.WatchList the informer
// syncs from the watch-list stream, without a list, and transforms each
// object as it arrives.
func TestWatchListStreamsTheInitialList(t *testing.T) {
	client, lists := streamingServer(&gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "bar",
		ResourceVersion: "5", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}})
	api := New(Config{Name: "ReferenceGrant", Discovery: newDiscovery(v1Grants), Candidates: grantCandidates(client)[:1],
		PollInterval: 10 * time.Millisecond, WatchList: true,
		Prepare: func(_ Candidate, inf cache.SharedIndexInformer) error {
			return inf.SetTransform(func(obj any) (any, error) {
				if g, ok := obj.(*gatewayv1.ReferenceGrant); ok {
					g.ManagedFields = nil
				}
				return obj, nil
			})
		}})
	start(t, api)
	waitUntil(t, "the cache syncs", func() bool { return available(api) })
	inf, _, _ := api.Informer()
	objs := inf.GetStore().List()
	if len(objs) != 1 {
		t.Fatalf("the cache holds %d grants, want the one streamed", len(objs))
	}
	if g := objs[0].(*gatewayv1.ReferenceGrant); g.ManagedFields != nil {
		t.Errorf("the cached grant kept its managed fields: the transform did not run")
	}
	if n := lists.Load(); n != 0 {
		t.Errorf("the informer listed %d times, want none: it streams", n)
	}
}

// TestWatchListRefusalAsksForEveryVerb: a refused watch-list stream is the
// informer's list refused; whether list alone would be allowed is unknown,
// so the message asks for every verb the cache needs.
func TestWatchListRefusalAsksForEveryVerb(t *testing.T) {
	client := gatewayfake.NewClientset()
	client.PrependWatchReactor("referencegrants", func(clienttesting.Action) (bool, watch.Interface, error) {
		return true, nil, forbidden("watch")
	})
	api := New(Config{Name: "ReferenceGrant", Discovery: newDiscovery(v1Grants), Candidates: grantCandidates(client)[:1],
		PollInterval: 10 * time.Millisecond, RetryRefused: time.Hour, Clock: newManualClock(), WatchList: true})
	start(t, api)
	refusedWith(t, api, "cannot list gateway.networking.k8s.io/v1/referencegrants: forbidden: grant get, list and watch on referencegrants.gateway.networking.k8s.io")
}
