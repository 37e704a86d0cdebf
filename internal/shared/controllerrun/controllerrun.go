// Package controllerrun starts the project's controllers beside the sidecar
// (the volume-data-source-validator and the storage-transfer-controller)
// the same way, from the flags of controllerflags: the API client with
// --kube-api-qps and --kube-api-burst, an event recorder on a client of
// its own, a metrics registry served with the legacy registry on
// --metrics-path next to /healthz, and leader election on a client of its
// own. A component builds its clients of CRDs, its metrics and its
// controller from an Env, and hands what is its own to Env.Run.
package controllerrun

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/xns-csi/csi-provisioner/internal/shared/controllerflags"
	"github.com/xns-csi/csi-provisioner/internal/shared/httpendpoint"
	"github.com/xns-csi/csi-provisioner/internal/shared/kubeclients"
	"github.com/xns-csi/csi-provisioner/internal/shared/leader"

	// Register client-go's request metrics (the controllers' API cost),
	// the leader-election metrics and the workqueue metrics with the
	// legacy registry served on --metrics-path, as the sidecar does.
	_ "k8s.io/component-base/metrics/prometheus/clientgo/leaderelection"
	_ "k8s.io/component-base/metrics/prometheus/restclient"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
)

// Env is what a controller is built from: the shared clients, registry
// and recorder, and the settings Run follows.
type Env struct {
	// Config is the API client configuration, with the component as user
	// agent and --kube-api-qps and --kube-api-burst. Build the clients of
	// CRDs from it (see kubeclients.Core).
	Config *rest.Config
	// Kube is the client of core objects (protobuf).
	Kube kubernetes.Interface
	// Registry takes the controller's own metrics; Run serves it on
	// --metrics-path together with the legacy registry.
	Registry *prometheus.Registry
	// Recorder records events with the component as their source, through
	// a client of its own, so a burst of them cannot slow Kube down.
	Recorder record.EventRecorder
	// Events is the client Recorder writes through, for a component that
	// writes its events itself to know each one was stored.
	Events kubernetes.Interface

	opts *controllerflags.Common
	// runLeader is leader.Run; tests replace it.
	runLeader func(context.Context, leader.Config, func(context.Context)) error
}

// New builds the Env of component from opts. The recorder knows the kinds
// of kinds (scheme.Scheme for core objects alone). Its events stop being
// sent when ctx ends.
func New(ctx context.Context, opts *controllerflags.Common, component string, kinds *runtime.Scheme) (*Env, error) {
	config, err := kubeclients.RestConfig(opts.Kubeconfig, component)
	if err != nil {
		return nil, err
	}
	config.QPS, config.Burst = opts.KubeAPIQPS, opts.KubeAPIBurst
	kube, events, err := kubeclients.Core(config)
	if err != nil {
		return nil, err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: events.CoreV1().Events(v1.NamespaceAll)})
	return &Env{
		Config:    config,
		Kube:      kube,
		Registry:  prometheus.NewRegistry(),
		Recorder:  broadcaster.NewRecorder(kinds, v1.EventSource{Component: component}),
		opts:      opts,
		Events:    events,
		runLeader: leader.Run,
	}, nil
}

// Controller is a component's own part of running: what Env.Run runs.
type Controller struct {
	// LockName names the Lease under --leader-election.
	LockName string
	// Endpoints are served on --http-endpoint besides --metrics-path and
	// /healthz, keyed by path.
	Endpoints map[string]http.Handler
	// Run runs the controller until its context ends.
	Run func(context.Context)
}

// Run serves --http-endpoint, if set, and runs c until ctx ends: directly,
// or under --leader-election, which adds its health check to the endpoint.
// It returns an error only when it fails to start.
func (e *Env) Run(ctx context.Context, c Controller) error {
	var mux *http.ServeMux
	if e.opts.HTTPEndpoint != "" {
		mux = e.mux(c.Endpoints)
		if _, err := httpendpoint.Serve(ctx, e.opts.HTTPEndpoint, mux); err != nil {
			return err
		}
	}
	if !e.opts.LeaderElection.Enabled {
		c.Run(ctx)
		return nil
	}
	// A client of its own, so busy workers cannot starve lease renewal.
	leClient, err := kubernetes.NewForConfig(rest.CopyConfig(e.Config))
	if err != nil {
		return err
	}
	return e.runLeader(ctx, leader.Config{Options: e.opts.LeaderElection, Client: leClient, LockName: c.LockName, Mux: mux,
		ReleaseOnExit: e.opts.ReleaseOnExit()}, c.Run)
}

// mux serves the metrics of Registry and of the legacy registry on
// --metrics-path, "ok" on /healthz, and endpoints.
func (e *Env) mux(endpoints map[string]http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(e.opts.MetricsPath, promhttp.HandlerFor(prometheus.Gatherers{e.Registry, legacyregistry.DefaultGatherer}, promhttp.HandlerOpts{}))
	mux.Handle("/healthz", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	for path, handler := range endpoints {
		mux.Handle(path, handler)
	}
	return mux
}
