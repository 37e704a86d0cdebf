package referencegrant

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/xns-csi/csi-provisioner/test/discoverytest"
)

// eventually bounds how long tests wait for asynchronous effects; it bounds
// a failure, not the speed of a success.
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

// discoveryStub is the discovery the checker polls, serving ReferenceGrants
// in the versions a test chooses.
type discoveryStub struct{ *discoverytest.Discovery }

// servedVersions makes a discovery that serves ReferenceGrants in versions.
func servedVersions(versions ...string) *discoveryStub {
	d := &discoveryStub{discoverytest.New()}
	d.serve(versions...)
	return d
}

// serve replaces the ReferenceGrant versions the API server serves.
func (d *discoveryStub) serve(versions ...string) {
	var served []*metav1.APIResourceList
	for _, v := range versions {
		served = append(served, discoverytest.Resources("gateway.networking.k8s.io/"+v, "referencegrants"))
	}
	d.Serve(served...)
}

// changes records OnChange calls.
type changes struct {
	mu         sync.Mutex
	namespaces []string
}

func (c *changes) record(namespace string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.namespaces = append(c.namespaces, namespace)
}

// seen reports whether OnChange was called with namespace.
// count returns how many times namespace was announced.
func (c *changes) count(namespace string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, ns := range c.namespaces {
		if ns == namespace {
			n++
		}
	}
	return n
}

func (c *changes) seen(namespace string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ns := range c.namespaces {
		if ns == namespace {
			return true
		}
	}
	return false
}

// runChecker starts a checker on client and disc, its Config changed by
// opts, until the test ends.
func runChecker(t *testing.T, client *gatewayfake.Clientset, disc *discoveryStub, opts ...func(*Config)) (*Checker, *changes) {
	t.Helper()
	changed := &changes{}
	cfg := Config{
		Client:       client,
		Discovery:    disc,
		PollInterval: 10 * time.Millisecond,
		OnChange:     changed.record,
	}
	for _, o := range opts {
		o(&cfg)
	}
	checker := NewChecker(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		checker.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return checker, changed
}

// waitUntilWatching waits until the informer watches ReferenceGrants: the
// fake clientset ignores resource versions, so objects created between the
// informer's list and its watch would never reach the cache.
func waitUntilWatching(t *testing.T, client *gatewayfake.Clientset) {
	t.Helper()
	waitUntil(t, "the informer watches ReferenceGrants", func() bool {
		for _, a := range client.Actions() {
			if a.GetVerb() == "watch" && a.GetResource().Resource == "referencegrants" {
				return true
			}
		}
		return false
	})
}

// decidesAs waits until checker decides ref with reason.
func decidesAs(t *testing.T, checker *Checker, ref Reference, reason Reason) Decision {
	t.Helper()
	var d Decision
	waitUntil(t, "the decision is "+string(reason), func() bool {
		d = checker.Check(ref)
		return d.Reason == reason
	})
	return d
}
