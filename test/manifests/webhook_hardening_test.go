package manifests

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/xns-csi/csi-provisioner/internal/snapshotwebhook"
)

// The webhook's limits in deploy/webhook (issue 22, defect 9).

// TestWebhookMemoryLimitHoldsItsLimits: the container's memory limit is
// at least what the webhook's own request limits let it use
// (snapshotwebhook.Limits.MemoryBound of the Deployment's flags), and Go's
// garbage collector is told to stay under it (GOMEMLIMIT, checkGoMemLimit),
// so garbage does not take the container past it.
func TestWebhookMemoryLimitHoldsItsLimits(t *testing.T) {
	c := webhookContainer(t, renderWebhook(t).deployment)
	opts, err := snapshotwebhook.ParseFlags(c.Args)
	if err != nil {
		t.Fatalf("the Deployment's args %q: %v", c.Args, err)
	}
	bound := opts.Limits.MemoryBound()
	limit, ok := c.Resources.Limits[v1.ResourceMemory]
	if !ok {
		t.Fatalf("no memory limit, want at least %d MiB (MemoryBound of %+v)", bound>>20, opts.Limits)
	}
	if limit.Value() < bound {
		t.Errorf("memory limit %s, want at least %d MiB (MemoryBound of %+v)", limit.String(), bound>>20, opts.Limits)
	}
	if request := c.Resources.Requests[v1.ResourceMemory]; request.Cmp(limit) > 0 {
		t.Errorf("memory request %s over the limit %s", request.String(), limit.String())
	}
	checkGoMemLimit(t, &c)
}

// TestWebhookNetworkPolicy: the webhook's pods admit their HTTPS port (the
// Service's target, which kube-apiserver calls) and their metrics port
// from scrapers only; nothing else. The HTTPS rule admits any source:
// NetworkPolicy cannot select a kube-apiserver on the host network or
// outside the cluster portably (docs/webhook.md, "Hardening").
func TestWebhookNetworkPolicy(t *testing.T) {
	r := renderWebhook(t)
	p := r.policy
	if !selects(&p.Spec.PodSelector, labels.Set(r.deployment.Spec.Template.Labels)) || p.Namespace != r.deployment.Namespace {
		t.Errorf("NetworkPolicy %s/%s selects %+v, want the webhook's pods", p.Namespace, p.Name, p.Spec.PodSelector)
	}
	if !slices.Equal(p.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
		t.Errorf("policyTypes %v, want [Ingress]", p.Spec.PolicyTypes)
	}
	c := webhookContainer(t, r.deployment)
	https := r.service.Spec.Ports[0].TargetPort.String()
	admitted := map[string][]networkingv1.NetworkPolicyPeer{}
	for _, rule := range p.Spec.Ingress {
		if len(rule.Ports) == 0 {
			t.Errorf("rule %+v admits every port", rule)
		}
		for _, port := range rule.Ports {
			if !slices.ContainsFunc(c.Ports, func(cp v1.ContainerPort) bool { return cp.Name == port.Port.String() }) {
				t.Errorf("rule admits port %s, which the container does not name", port.Port)
			}
			admitted[port.Port.String()] = rule.From
		}
	}
	if from, ok := admitted[https]; !ok || len(from) != 0 {
		t.Errorf("port %s (the Service's target) admitted from %+v (%v), want any source", https, from, ok)
	}
	if from, ok := admitted["http-endpoint"]; !ok || len(from) == 0 {
		t.Errorf("port http-endpoint (metrics) admitted from %+v (%v), want scrapers' namespaces only", from, ok)
	}
	if len(admitted) != 2 {
		t.Errorf("ports admitted: %v, want https and http-endpoint only", admitted)
	}
}

// webhookContainer is the webhook's container of d.
func webhookContainer(t *testing.T, d *appsv1.Deployment) v1.Container {
	t.Helper()
	i := slices.IndexFunc(d.Spec.Template.Spec.Containers, func(c v1.Container) bool { return c.Name == webhookName })
	if i < 0 {
		t.Fatalf("Deployment has no container %s", webhookName)
	}
	return d.Spec.Template.Spec.Containers[i]
}

// TestWebhookDrainsBeforeItStops: a terminating replica keeps answering
// while the endpoints move to the others (issue 22, defect 10): a preStop
// sleep holds SIGTERM back while the Service's endpoints and kube-proxy
// drop the pod, then the webhook drains for --shutdown-delay-duration and
// finishes the requests in flight, all within
// terminationGracePeriodSeconds (or the kubelet kills it mid-request).
func TestWebhookDrainsBeforeItStops(t *testing.T) {
	d := renderWebhook(t).deployment
	c := webhookContainer(t, d)
	opts, err := snapshotwebhook.ParseFlags(c.Args)
	if err != nil {
		t.Fatalf("the Deployment's args %q: %v", c.Args, err)
	}
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Sleep.Seconds < 1 {
		t.Fatalf("lifecycle %+v, want a preStop sleep", c.Lifecycle)
	}
	if opts.ShutdownDelay <= 0 {
		t.Errorf("--shutdown-delay-duration %v, want a drain", opts.ShutdownDelay)
	}
	preStop := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	grace := d.Spec.Template.Spec.TerminationGracePeriodSeconds
	if grace == nil || time.Duration(*grace)*time.Second < preStop+opts.StopTimeout() {
		t.Errorf("terminationGracePeriodSeconds %v, want at least the preStop sleep (%v) plus the drain and the requests in flight (%v)",
			grace, preStop, opts.StopTimeout())
	}
}
