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

// TestWatchListRefusalFallsBackToList: a refused watch-list stream says
// nothing about list, so the informer lists; with list allowed and watch
// refused (upstream's RBAC on contents), it lists once and the refusal asks
// for watch alone. With both refused, it asks for every verb.
func TestWatchListRefusalFallsBackToList(t *testing.T) {
	for _, tt := range []struct {
		name        string
		listRefused bool
		wantLists   int32
		want        string
	}{
		{name: "list allowed", wantLists: 1,
			want: "cannot watch gateway.networking.k8s.io/v1/referencegrants: forbidden: grant watch on referencegrants.gateway.networking.k8s.io"},
		{name: "list refused too", listRefused: true, wantLists: 1,
			want: "cannot list gateway.networking.k8s.io/v1/referencegrants: forbidden: grant get, list and watch on referencegrants.gateway.networking.k8s.io"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client := gatewayfake.NewClientset()
			var lists atomic.Int32
			client.PrependReactor("list", "referencegrants", func(clienttesting.Action) (bool, runtime.Object, error) {
				lists.Add(1)
				if tt.listRefused {
					return true, nil, forbidden("list")
				}
				return false, nil, nil
			})
			client.PrependWatchReactor("referencegrants", func(clienttesting.Action) (bool, watch.Interface, error) {
				return true, nil, forbidden("watch")
			})
			api := New(Config{Name: "ReferenceGrant", Discovery: newDiscovery(v1Grants), Candidates: grantCandidates(client)[:1],
				PollInterval: 10 * time.Millisecond, RetryRefused: time.Hour, Clock: newManualClock(), WatchList: true})
			start(t, api)
			refusedWith(t, api, tt.want)
			if n := lists.Load(); n != tt.wantLists {
				t.Errorf("the informer listed %d times, want %d", n, tt.wantLists)
			}
		})
	}
}
