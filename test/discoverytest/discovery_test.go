package discoverytest

import (
	"context"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
)

// Discovery is handed to components as a discovery.DiscoveryInterface.
var _ discovery.DiscoveryInterface = &Discovery{}

const v1 = "gateway.networking.k8s.io/v1"

func TestServedResourcesAreFound(t *testing.T) {
	d := New(Resources(v1, "referencegrants"))
	list, err := d.ServerResourcesForGroupVersion(v1)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.APIResources) != 1 || list.APIResources[0].Name != "referencegrants" || !list.APIResources[0].Namespaced {
		t.Fatalf("got %+v, want the namespaced resource referencegrants", list.APIResources)
	}
}

func TestUnservedGroupVersionIsNotFound(t *testing.T) {
	d := New(Resources(v1, "referencegrants"))
	_, err := d.ServerResourcesForGroupVersionWithContext(context.Background(), "gateway.networking.k8s.io/v1beta1")
	if !apierrors.IsNotFound(err) {
		t.Fatalf("got error %v, want NotFound", err)
	}
}

func TestServeChangesWhatIsServed(t *testing.T) {
	d := New()
	if _, err := d.ServerResourcesForGroupVersion(v1); !apierrors.IsNotFound(err) {
		t.Fatalf("before Serve: got error %v, want NotFound", err)
	}
	d.Serve(Resources(v1, "referencegrants"))
	if _, err := d.ServerResourcesForGroupVersion(v1); err != nil {
		t.Fatalf("after Serve: %v", err)
	}
	d.Serve()
	if _, err := d.ServerResourcesForGroupVersion(v1); !apierrors.IsNotFound(err) {
		t.Fatalf("after serving nothing: got error %v, want NotFound", err)
	}
}

// TestServeWhilePolled lets the race detector check that Serve and lookups
// may run concurrently.
func TestServeWhilePolled(t *testing.T) {
	d := New()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range 100 {
			d.Serve(Resources(v1, "referencegrants"))
			d.Serve()
		}
	}()
	go func() {
		defer wg.Done()
		for range 100 {
			_, _ = d.ServerResourcesForGroupVersion(v1)
		}
	}()
	wg.Wait()
}
