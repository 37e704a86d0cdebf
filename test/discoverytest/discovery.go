// Package discoverytest provides a fake discovery client whose served
// resources a test can change while the component under test polls it, as
// the optional-API, ReferenceGrant and sidecar tests do when a CRD is
// installed or removed at run time.
package discoverytest

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// Discovery is client-go's fake discovery made safe to change while it is
// polled: the fake reads its Resources field without a lock, so Serve and
// the per-group/version lookups take mu. Only those lookups are guarded;
// the fake's other methods still read Resources unlocked and must not race
// with Serve.
type Discovery struct {
	*fakediscovery.FakeDiscovery
	mu sync.Mutex
}

// New returns a Discovery that serves the given resource lists.
func New(served ...*metav1.APIResourceList) *Discovery {
	return &Discovery{FakeDiscovery: &fakediscovery.FakeDiscovery{
		Fake: &clienttesting.Fake{Resources: served},
	}}
}

// Serve replaces what the API server serves, as when a CRD is installed or
// removed.
func (d *Discovery) Serve(served ...*metav1.APIResourceList) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Resources = served
}

// ServerResourcesForGroupVersion returns the resources served in gv, or a
// NotFound error when gv is not served.
func (d *Discovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	return d.ServerResourcesForGroupVersionWithContext(context.Background(), gv)
}

// ServerResourcesForGroupVersionWithContext returns the resources served in
// gv, or a NotFound error when gv is not served.
func (d *Discovery) ServerResourcesForGroupVersionWithContext(ctx context.Context, gv string) (*metav1.APIResourceList, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.FakeDiscovery.ServerResourcesForGroupVersionWithContext(ctx, gv)
}

// Resources is the discovery document of one group/version that serves the
// named namespaced resources, e.g.
// Resources("gateway.networking.k8s.io/v1", "referencegrants").
func Resources(groupVersion string, names ...string) *metav1.APIResourceList {
	list := &metav1.APIResourceList{GroupVersion: groupVersion}
	for _, n := range names {
		list.APIResources = append(list.APIResources, metav1.APIResource{Name: n, Namespaced: true})
	}
	return list
}
