package sidecar

// Adversarial review of commit e3b1b84 ("Composition roots read top to
// bottom"): build became the steps of wiring. What must not have changed:
// without --cross-namespace-snapshot the link readers of the policy and of
// source protection stay nil interfaces (a typed nil *linkcache.Cache
// would be followed, and panic or release link finalizers), the events
// client and the discovery clients keep their defaults, and the protector
// decides with the very policy provisioning uses. These tests run the
// steps build runs, in its order, on fake clients.

import (
	"testing"
	"time"

	snapfake "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/fake"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	linkfake "github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned/fake"
)

// review24bWiring runs build's steps up to source protection on fake
// clients, with or without --cross-namespace-snapshot, and returns the
// wiring and the configuration as completed.
func review24bWiring(t *testing.T, links bool, change func(*buildConfig)) *wiring {
	t.Helper()
	opts := NewOptions()
	opts.CrossNamespaceSnapshot = links
	cfg := buildConfig{opts: opts, kube: kubefake.NewClientset(), snapshots: snapfake.NewSimpleClientset(),
		gateway: gatewayfake.NewSimpleClientset(), links: linkfake.NewSimpleClientset(),
		identity: driverIdentity{name: "csi.example.com"}}
	if change != nil {
		change(&cfg)
	}
	if err := cfg.complete(); err != nil {
		t.Fatal(err)
	}
	w := &wiring{cfg: cfg, opts: cfg.opts, informers: newInformerSet(cfg.kube, cfg.opts, cfg.identity.name)}
	if err := w.caches(); err != nil {
		t.Fatal(err)
	}
	w.sourcePolicy()
	w.sourceProtection()
	return w
}

func TestReview24bLinkReadersAreNilInterfacesWithoutLinks(t *testing.T) {
	w := review24bWiring(t, false, nil)
	if w.links != nil || w.linkStatus != nil {
		t.Fatalf("links %v, link statuses %v without --cross-namespace-snapshot; want neither", w.links, w.linkStatus)
	}
	if w.policy.SnapshotLinks || w.policy.Links != nil {
		t.Errorf("policy follows links %v with reader %#v; want off, with a nil interface", w.policy.SnapshotLinks, w.policy.Links)
	}
	if w.protection.Links != nil || w.protection.Policy.Links != nil {
		t.Errorf("source protection reads links through %#v, its policy through %#v; want nil interfaces",
			w.protection.Links, w.protection.Policy.Links)
	}
}

func TestReview24bLinkReadersAreTheLinkCacheWithLinks(t *testing.T) {
	w := review24bWiring(t, true, nil)
	if w.links == nil || w.linkStatus == nil {
		t.Fatalf("links %v, link statuses %v with --cross-namespace-snapshot; want both", w.links, w.linkStatus)
	}
	if !w.policy.SnapshotLinks || w.policy.Links != w.links {
		t.Errorf("policy follows links %v with reader %#v; want on, with the link cache", w.policy.SnapshotLinks, w.policy.Links)
	}
	if w.protection.Links != w.links || w.protection.Policy.Links != w.links || !w.protection.Policy.SnapshotLinks {
		t.Errorf("source protection reads links through %#v, its policy through %#v; want the link cache", w.protection.Links,
			w.protection.Policy.Links)
	}
	if w.cfg.linkDiscovery == nil {
		t.Error("the link cache's discovery was not defaulted to its client's")
	}
}

// TestReview24bProtectionDecidesWithProvisioningsPolicy: the protector
// must count as in use exactly the claims provisioning would provision,
// so it is handed the same grant checker, deletion order and gate.
func TestReview24bProtectionDecidesWithProvisioningsPolicy(t *testing.T) {
	for _, links := range []bool{false, true} {
		w := review24bWiring(t, links, func(c *buildConfig) {
			if err := c.opts.FeatureGate.Set("CrossNamespaceSourceProvisioning=true"); err != nil {
				t.Fatal(err)
			}
		})
		p, q := w.policy, w.protection.Policy
		if q.Grants != p.Grants || q.Grants != w.grants || q.Order != p.Order || q.CrossNamespace != p.CrossNamespace || !q.CrossNamespace ||
			q.Driver != p.Driver || q.Snapshots != p.Snapshots || q.Links != p.Links || q.SnapshotLinks != p.SnapshotLinks {
			t.Errorf("links %v: protection's policy %+v differs from provisioning's %+v", links, q, p)
		}
		if w.protection.InFlight == nil || w.protection.InFlight != w.attempts {
			t.Errorf("links %v: protection's attempts %p, provisioning's %p; want one registry", links, w.protection.InFlight, w.attempts)
		}
	}
}

func TestReview24bClientDefaults(t *testing.T) {
	w := review24bWiring(t, false, nil)
	if w.cfg.events != w.cfg.kube {
		t.Errorf("events client %v without one set; want the main client", w.cfg.events)
	}
	if w.cfg.snapshotDiscovery == nil || w.cfg.gatewayDiscovery == nil || w.cfg.kubeDiscovery == nil {
		t.Errorf("discovery not defaulted: snapshots %v, gateway %v, kube %v", w.cfg.snapshotDiscovery, w.cfg.gatewayDiscovery, w.cfg.kubeDiscovery)
	}
	if w.cfg.pollInterval != optionalAPIPollInterval {
		t.Errorf("poll interval %s, want %s", w.cfg.pollInterval, optionalAPIPollInterval)
	}

	var events kubernetes.Interface = kubefake.NewClientset()
	w = review24bWiring(t, false, func(c *buildConfig) { c.events, c.pollInterval = events, time.Second })
	if w.cfg.events != events || w.cfg.pollInterval != time.Second {
		t.Errorf("events client %v, poll interval %s; want the ones set", w.cfg.events, w.cfg.pollInterval)
	}
}
