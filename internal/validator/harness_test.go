package validator

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	popv1beta1 "github.com/xns-csi/csi-provisioner/pkg/apis/populator/v1beta1"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned/fake"
	"github.com/xns-csi/csi-provisioner/test/discoverytest"
)

// eventually bounds every wait; it bounds a failure, never a success.
const eventually = 10 * time.Second

var (
	grantResources     = discoverytest.Resources("gateway.networking.k8s.io/v1", "referencegrants")
	populatorResources = discoverytest.Resources("populator.storage.k8s.io/v1beta1", "volumepopulators")
	linkResources      = discoverytest.Resources("snapshot.storage.k8s.io/v1alpha1", "volumesnapshotlinks")
)

// env is a validator running against fake clientsets, with one worker, so
// that decisions come one at a time, in order.
type env struct {
	t    *testing.T
	ctx  context.Context
	kube *kubefake.Clientset
	// events is the API server the events are written to, a client of
	// their own as in Run.
	events   *kubefake.Clientset
	gateway  *gatewayfake.Clientset
	api      *fake.Clientset
	grantAPI *discoverytest.Discovery
	apiAPI   *discoverytest.Discovery
	registry *prometheus.Registry
	c        *Controller
	ready    *readiness
	// decisions receives every decision the controller acted on; backlog
	// holds those received and not yet looked for.
	decisions chan decided
	backlog   []decided
	// seen are the names of the events told has returned.
	seen map[string]bool
}

type decided struct {
	key string
	out Outcome
}

type envConfig struct {
	grantCRD, populatorCRD, linkCRD bool
	linksOff                        bool
	// claims exist before the validator starts.
	claims []*v1.PersistentVolumeClaim
	// eventLatency is how long the API server takes to store an event.
	eventLatency time.Duration
	// undecided leaves the decisions unreported (decidedAs cannot be
	// used), for tests of more claims than the decisions channel holds.
	undecided bool
	// refused are the resources the API server refuses to let the
	// validator list ("referencegrants", "volumesnapshotlinks").
	refused []string
	// refusedAfter, when set, holds each refusal until it is closed.
	refusedAfter chan struct{}
	// clock is the controller's; the real clock when nil.
	clock clock.PassiveClock
}

type envOption func(*envConfig)

func withoutGrantCRD(c *envConfig)     { c.grantCRD = false }
func withoutPopulatorCRD(c *envConfig) { c.populatorCRD = false }
func linksOff(c *envConfig)            { c.linksOff = true }

// withClaims makes claims exist before the validator starts.
func withClaims(claims ...*v1.PersistentVolumeClaim) envOption {
	return func(c *envConfig) { c.claims = append(c.claims, claims...) }
}

// withEventLatency makes the API server take d to store each event.
func withEventLatency(d time.Duration) envOption {
	return func(c *envConfig) { c.eventLatency = d }
}

// withClock gives the controller clock.
func withClock(clock clock.PassiveClock) envOption {
	return func(c *envConfig) { c.clock = clock }
}

// undecided leaves the decisions unreported.
func undecided(c *envConfig) { c.undecided = true }

// refusing makes the API server refuse to let the validator's
// ServiceAccount list resource, as when its RBAC misses the rule.
func refusing(resource string) envOption {
	return func(c *envConfig) { c.refused = append(c.refused, resource) }
}

// refusingAfter holds the refusals of refusing until gate is closed: the
// list is slow to come back, then refused.
func refusingAfter(gate chan struct{}) envOption {
	return func(c *envConfig) { c.refusedAfter = gate }
}

// validatorUser is the validator's ServiceAccount as the API server names
// it in a refusal.
const validatorUser = "system:serviceaccount:kube-system:volume-data-source-validator"

// startEnv starts the validator with the sidecars' gate on, deciding links,
// and every CRD served unless options say otherwise.
func startEnv(t *testing.T, options ...envOption) *env {
	t.Helper()
	cfg := envConfig{grantCRD: true, populatorCRD: true, linkCRD: true}
	for _, o := range options {
		o(&cfg)
	}
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	var seeded []runtime.Object
	for _, c := range cfg.claims {
		seeded = append(seeded, c)
	}
	e := &env{t: t, ctx: ctx, kube: kubefake.NewClientset(seeded...), events: kubefake.NewClientset(), gateway: gatewayfake.NewSimpleClientset(),
		api: fake.NewSimpleClientset(), grantAPI: discoverytest.New(), apiAPI: discoverytest.New(), registry: prometheus.NewRegistry(),
		decisions: make(chan decided, 100), seen: map[string]bool{}}
	e.serve(cfg.grantCRD, cfg.populatorCRD, cfg.linkCRD)
	metrics, err := NewMetrics(e.registry)
	if err != nil {
		t.Fatal(err)
	}
	for _, resource := range cfg.refused {
		refuse := func(action clienttesting.Action) (bool, runtime.Object, error) {
			if cfg.refusedAfter != nil {
				<-cfg.refusedAfter
			}
			gr := action.GetResource().GroupResource()
			return true, nil, apierrors.NewForbidden(gr, "", fmt.Errorf("User %q cannot list resource %q in API group %q at the cluster scope",
				validatorUser, gr.Resource, gr.Group))
		}
		e.gateway.PrependReactor("list", resource, refuse)
		e.api.PrependReactor("list", resource, refuse)
	}
	if cfg.eventLatency > 0 {
		e.events.PrependReactor("create", "events", func(clienttesting.Action) (bool, runtime.Object, error) {
			time.Sleep(cfg.eventLatency)
			return false, nil, nil
		})
	}
	e.c, err = New(Config{Kube: e.kube, Events: e.events.CoreV1(), Gateway: e.gateway, API: e.api,
		GatewayDiscovery: e.grantAPI, APIDiscovery: e.apiAPI, PollInterval: 10 * time.Millisecond,
		CrossNamespace: true, SnapshotLinks: !cfg.linksOff, Metrics: metrics, Clock: cfg.clock})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.undecided {
		e.c.decided = func(claim *v1.PersistentVolumeClaim, out Outcome) {
			select {
			case e.decisions <- decided{key: claim.Namespace + "/" + claim.Name, out: out}:
			case <-ctx.Done():
			}
		}
	}
	e.ready = &readiness{controller: e.c}
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.c.Run(ctx, 1)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	e.waitFor("the claim cache to sync", e.c.synced.Load)
	return e
}

// serve sets which CRDs the fake API server serves, as when one is
// installed.
func (e *env) serve(grantCRD, populatorCRD, linkCRD bool) {
	var grants, api []*metav1.APIResourceList
	if grantCRD {
		grants = append(grants, grantResources)
	}
	if populatorCRD {
		api = append(api, populatorResources)
	}
	if linkCRD {
		api = append(api, linkResources)
	}
	e.grantAPI.Serve(grants...)
	e.apiAPI.Serve(api...)
}

// --- objects ---------------------------------------------------------------

func (e *env) createClaim(c *v1.PersistentVolumeClaim) {
	e.t.Helper()
	if _, err := e.kube.CoreV1().PersistentVolumeClaims(c.Namespace).Create(e.ctx, c, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// updateClaim changes the claim "test/name" with change.
func (e *env) updateClaim(name string, change func(*v1.PersistentVolumeClaim)) {
	e.t.Helper()
	c, err := e.kube.CoreV1().PersistentVolumeClaims("test").Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	change(c)
	if _, err := e.kube.CoreV1().PersistentVolumeClaims("test").Update(e.ctx, c, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) createPopulator(p *popv1beta1.VolumePopulator) {
	e.t.Helper()
	if _, err := e.api.PopulatorV1beta1().VolumePopulators().Create(e.ctx, p.DeepCopy(), metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) deletePopulator(name string) {
	e.t.Helper()
	if err := e.api.PopulatorV1beta1().VolumePopulators().Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) createLink(l *snapv1alpha1.VolumeSnapshotLink) {
	e.t.Helper()
	if _, err := e.api.SnapshotV1alpha1().VolumeSnapshotLinks(l.Namespace).Create(e.ctx, l.DeepCopy(), metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// createGrant creates g as a gateway.networking.k8s.io/v1 ReferenceGrant.
func (e *env) createGrant(g referencegrant.Grant) {
	e.t.Helper()
	rg := &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: g.Namespace, Name: g.Name}}
	for _, f := range g.From {
		rg.Spec.From = append(rg.Spec.From, gatewayv1.ReferenceGrantFrom{Group: gatewayv1.Group(f.Group), Kind: gatewayv1.Kind(f.Kind),
			Namespace: gatewayv1.Namespace(f.Namespace)})
	}
	for _, to := range g.To {
		entry := gatewayv1.ReferenceGrantTo{Group: gatewayv1.Group(to.Group), Kind: gatewayv1.Kind(to.Kind)}
		if to.Name != "" {
			name := gatewayv1.ObjectName(to.Name)
			entry.Name = &name
		}
		rg.Spec.To = append(rg.Spec.To, entry)
	}
	if _, err := e.gateway.GatewayV1().ReferenceGrants(g.Namespace).Create(e.ctx, rg, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) deleteGrant(namespace, name string) {
	e.t.Helper()
	if err := e.gateway.GatewayV1().ReferenceGrants(namespace).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// --- expectations ----------------------------------------------------------

// decidedAs waits until the claim "test/name" is decided with want, and
// returns the outcome. Earlier decisions of that claim are dropped; those
// of other claims are kept for their own decidedAs.
func (e *env) decidedAs(name string, want Action) Outcome {
	e.t.Helper()
	key := "test/" + name
	timeout := time.After(eventually)
	for {
		if i := slices.IndexFunc(e.backlog, func(d decided) bool { return d.key == key }); i >= 0 {
			d := e.backlog[i]
			e.backlog = slices.Delete(e.backlog, i, i+1)
			if d.out.Action == want {
				return d.out
			}
			continue
		}
		select {
		case d := <-e.decisions:
			e.backlog = append(e.backlog, d)
		case <-timeout:
			e.t.Fatalf("claim %s was not decided %v", key, want)
		}
	}
}

// told returns the events stored since the last call, as "Warning
// <reason> <message>", oldest first.
func (e *env) told() []string {
	e.t.Helper()
	list, err := e.events.CoreV1().Events(v1.NamespaceAll).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b v1.Event) int { return a.FirstTimestamp.Compare(b.FirstTimestamp.Time) })
	var events []string
	for _, ev := range list.Items {
		if !e.seen[ev.Name] {
			e.seen[ev.Name] = true
			events = append(events, ev.Type+" "+ev.Reason+" "+ev.Message)
		}
	}
	return events
}

// toldOnce checks that exactly one event was emitted since the last call,
// with reason and a message containing part.
func (e *env) toldOnce(reason, part string) {
	e.t.Helper()
	events := e.told()
	if len(events) != 1 || !strings.HasPrefix(events[0], v1.EventTypeWarning+" "+reason+" ") || !strings.Contains(events[0], part) {
		e.t.Fatalf("events %q, want one %s containing %q", events, reason, part)
	}
}

func (e *env) toldNothing() {
	e.t.Helper()
	if events := e.told(); len(events) > 0 {
		e.t.Fatalf("events %q, want none", events)
	}
}

// logs is what the validator logged so far.
func (e *env) logs() string {
	return klog.FromContext(e.ctx).GetSink().(ktesting.Underlier).GetBuffer().String()
}

// readyz returns the status and body of /readyz.
func (e *env) readyz() (int, string) {
	rec := httpGet(e.ready)
	return rec.Code, rec.Body.String()
}

// httpGet serves GET /readyz with h.
func httpGet(h http.Handler) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	return rec
}

// eventsTotal is volume_data_source_validator_events_total{reason}.
func (e *env) eventsTotal(reason string) float64 {
	e.t.Helper()
	families, err := e.registry.Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "volume_data_source_validator_events_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetLabel()[0].GetValue() == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// waitFor polls cond until it holds.
func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(eventually)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// eventsPerClaim counts the events stored on each claim, by reason:
// eventsPerClaim()["c"]["ReferenceGrantMissing"].
func (e *env) eventsPerClaim() map[string]map[string]int {
	e.t.Helper()
	list, err := e.events.CoreV1().Events(v1.NamespaceAll).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	counts := map[string]map[string]int{}
	for _, ev := range list.Items {
		name := ev.InvolvedObject.Name
		if counts[name] == nil {
			counts[name] = map[string]int{}
		}
		counts[name][ev.Reason]++
	}
	return counts
}
