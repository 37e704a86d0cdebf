package snapshotwebhook

import (
	"context"
	"net/http"
	"strconv"
	"sync"

	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/xns-csi/csi-provisioner/internal/shared/features"
	"github.com/xns-csi/csi-provisioner/internal/shared/httpendpoint"
	"github.com/xns-csi/csi-provisioner/internal/shared/kubeclients"
	"github.com/xns-csi/csi-provisioner/internal/snapshotwebhook/snapshotvalidation"
)

// Paths kube-apiserver calls, those of external-snapshotter's webhook so
// that its ValidatingWebhookConfigurations work unchanged. Both serve
// every resource the webhook knows.
const (
	snapshotPath      = "/volumesnapshot"
	groupSnapshotPath = "/volumegroupsnapshot"
)

// Run runs the webhook until ctx is done or it fails to start.
func Run(ctx context.Context, opts *Options) error {
	// certwatcher logs through controller-runtime's logger.
	ctrllog.SetLogger(klog.FromContext(ctx))
	config, err := kubeclients.RestConfig(opts.Kubeconfig, Component)
	if err != nil {
		return err
	}
	client, err := snapclientset.NewForConfig(config)
	if err != nil {
		return err
	}
	// What the HTTPS server's answers need (caches, diagnostics, events)
	// runs until it has stopped, through its drain after ctx ends.
	background, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBackground()
	ready := &Readiness{}
	metrics, err := serveDiagnostics(background, opts, ready)
	if err != nil {
		return err
	}
	recorder, stopEvents, err := newRecorder(background, config)
	if err != nil {
		return err
	}
	defer stopEvents()
	caches := []*classCache{newSnapshotClassCache(client, client.Discovery())}
	admitter := &Admitter{
		Content:         snapshotvalidation.ContentOptions{PreventVolumeModeConversion: opts.PreventVolumeModeConversion},
		SnapshotClasses: caches[0].List,
	}
	reportConflicts(caches[0], snapshotvalidation.SnapshotClassKind, recorder, metrics)
	if opts.EnableVolumeGroupSnapshotWebhook {
		caches = append(caches, newGroupSnapshotClassCache(client, client.Discovery()))
		admitter.GroupSnapshotClasses = caches[1].List
		reportConflicts(caches[1], snapshotvalidation.GroupSnapshotClassKind, recorder, metrics)
	}
	var runners []func(context.Context)
	state := stateSources{}
	for _, c := range caches {
		state.apis = append(state.apis, c)
	}
	if opts.GuardCrossNamespaceRestores {
		guard, err := newDeleteGuard(config, opts, caches[0].List)
		if err != nil {
			return err
		}
		admitter.DeleteGuard, runners = guard.guard, guard.runners
		state.guard, state.apis = guard.guard, append(state.apis, guard.apis...)
	}
	if err := metrics.exportState(state); err != nil {
		return err
	}
	server, err := listen(ctx, opts, NewHandler(admitter, metrics, opts.Limits), ready)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, c := range caches {
		wg.Go(func() { c.api.Run(background) })
	}
	for _, run := range runners {
		wg.Go(func() { run(background) })
	}
	klog.FromContext(ctx).Info("Validating snapshots", "preventVolumeModeConversion", opts.PreventVolumeModeConversion,
		"volumeGroupSnapshotClasses", opts.EnableVolumeGroupSnapshotWebhook, "guardCrossNamespaceRestores", opts.GuardCrossNamespaceRestores,
		"crossNamespace", features.CrossNamespaceEnabled(opts.FeatureGate), "crossNamespaceSnapshot", opts.CrossNamespaceSnapshot,
		"maxRequestsInFlight", opts.Limits.MaxInFlight, "maxRequestBytes", opts.Limits.MaxBodyBytes, "maxRequestBytesInFlight", opts.Limits.MaxBodyBytesInFlight, "maxConnections", opts.Limits.MaxConnections,
		"shutdownDelay", opts.ShutdownDelay)
	err = server.Serve(ctx)
	stopBackground()
	wg.Wait()
	return err
}

// newRecorder records the webhook's events through a client of their own
// until stop is called.
func newRecorder(ctx context.Context, config *rest.Config) (recorder record.EventRecorder, stop func(), err error) {
	events, err := kubernetes.NewForConfig(kubeclients.Protobuf(config))
	if err != nil {
		return nil, nil, err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: events.CoreV1().Events(v1.NamespaceAll)})
	return broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: Component}), broadcaster.Shutdown, nil
}

// listen opens the HTTPS server of the admission handler and /readyz.
func listen(ctx context.Context, opts *Options, handler http.Handler, ready *Readiness) (*Server, error) {
	mux := http.NewServeMux()
	mux.Handle(snapshotPath, handler)
	mux.Handle(groupSnapshotPath, handler)
	mux.Handle("/readyz", ready)
	return Listen(ctx, ServerConfig{Addr: ":" + strconv.Itoa(opts.Port), CertFile: opts.CertFile, KeyFile: opts.KeyFile,
		ClientCAFile: opts.ClientCAFile, EnableHTTP2: opts.EnableHTTP2, Handler: mux, ShutdownDelay: opts.ShutdownDelay, Readiness: ready,
		MaxConnections: opts.Limits.MaxConnections})
}

// serveDiagnostics creates the webhook's metrics and serves them with the
// health checks on --http-endpoint, when set, until ctx ends; /readyz
// answers with ready. The metrics include controller-runtime's (its
// certificate watcher's reads and errors) and the process's.
func serveDiagnostics(ctx context.Context, opts *Options, ready *Readiness) (*Metrics, error) {
	registry := prometheus.NewRegistry()
	metrics, err := NewMetrics(registry)
	if err != nil || opts.HTTPEndpoint == "" {
		return metrics, err
	}
	mux := http.NewServeMux()
	mux.Handle(opts.MetricsPath, promhttp.HandlerFor(
		prometheus.Gatherers{registry, ctrlmetrics.Registry, legacyregistry.DefaultGatherer}, promhttp.HandlerOpts{}))
	mux.Handle("/healthz", http.HandlerFunc(ok))
	mux.Handle("/readyz", ready)
	_, err = httpendpoint.Serve(ctx, opts.HTTPEndpoint, mux)
	return metrics, err
}

// ok answers /healthz: the webhook serves as soon as it listens, and
// allows what it cannot check yet.
func ok(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }

// reportConflicts warns about the default classes of kind that slipped past
// the default-class rule in c (see conflictReporter).
func reportConflicts(c *classCache, kind snapshotvalidation.ClassKind, recorder record.EventRecorder, metrics *Metrics) {
	r := &conflictReporter{kind: kind, list: c.List, event: recorder, gauge: metrics.conflicts.WithLabelValues(kind.Name),
		ref: func(name string) *v1.ObjectReference { return c.reference(kind.Name, name) }}
	c.AddHandler(r.handler())
	c.OnSynced(r.check) // the initial list's objects may reach the handler before the cache can be listed
}
