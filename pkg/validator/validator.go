package validator

import (
	"context"
	"net/http"
	"os"

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
	gatewayclientset "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/xns-csi/csi-provisioner/pkg/features"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
	"github.com/xns-csi/csi-provisioner/pkg/httpendpoint"
	"github.com/xns-csi/csi-provisioner/pkg/kubeclients"
	"github.com/xns-csi/csi-provisioner/pkg/leader"

	// Register client-go's request metrics (the validator's API cost), the
	// leader-election metrics and the workqueue metrics with the legacy
	// registry served on --metrics-path, as the sidecar does.
	_ "k8s.io/component-base/metrics/prometheus/clientgo/leaderelection"
	_ "k8s.io/component-base/metrics/prometheus/restclient"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
)

// Component is the validator's name: its events' source, its client's user
// agent.
const Component = "volume-data-source-validator"

// lockName is the upstream validator's Lease, so that while a cluster
// switches from one validator to the other only one of them runs.
const lockName = "data-source-validator-leader"

// Run runs the validator until ctx is done or it fails to start.
func Run(ctx context.Context, opts *Options) error {
	gcPercent := setGCPercent(os.Getenv)
	config, err := kubeclients.RestConfig(opts.Kubeconfig, Component)
	if err != nil {
		return err
	}
	config.QPS, config.Burst = opts.KubeAPIQPS, opts.KubeAPIBurst
	// Claims as protobuf; events with a client of their own, so a burst of
	// them cannot slow the caches' relists down.
	kube, events, err := kubeclients.Core(config)
	if err != nil {
		return err
	}
	gateway, err := gatewayclientset.NewForConfig(config)
	if err != nil {
		return err
	}
	api, err := versioned.NewForConfig(config)
	if err != nil {
		return err
	}
	registry := prometheus.NewRegistry()
	metrics, err := NewMetrics(registry)
	if err != nil {
		return err
	}
	controller, err := New(Config{Kube: kube, Recorder: newRecorder(ctx, events), Gateway: gateway, API: api,
		ResyncPeriod: opts.ResyncPeriod, CrossNamespace: features.CrossNamespaceEnabled(opts.FeatureGate),
		SnapshotLinks: opts.CrossNamespaceSnapshot, Metrics: metrics, WatchList: true})
	if err != nil {
		return err
	}
	ready := &readiness{controller: controller}
	var mux *http.ServeMux
	if opts.HTTPEndpoint != "" {
		mux = http.NewServeMux()
		mux.Handle(opts.MetricsPath, promhttp.HandlerFor(prometheus.Gatherers{registry, legacyregistry.DefaultGatherer}, promhttp.HandlerOpts{}))
		mux.Handle("/readyz", ready)
		mux.Handle("/healthz", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
		if _, err := httpendpoint.Serve(ctx, opts.HTTPEndpoint, mux); err != nil {
			return err
		}
	}
	klog.FromContext(ctx).Info("Deciding claims as the csi-provisioner sidecars do",
		"crossNamespace", features.CrossNamespaceEnabled(opts.FeatureGate), "crossNamespaceSnapshot", opts.CrossNamespaceSnapshot,
		"gogc", gcPercent)
	run := func(ctx context.Context) { controller.Run(ctx, opts.WorkerThreads) }
	if !opts.LeaderElection.Enabled {
		run(ctx)
		return nil
	}
	ready.standby.Store(true)
	// A client of its own, so busy workers cannot starve lease renewal.
	leClient, err := kubernetes.NewForConfig(rest.CopyConfig(config))
	if err != nil {
		return err
	}
	return leader.Run(ctx, leader.Config{Options: opts.LeaderElection, Client: leClient, LockName: lockName, Mux: mux,
		ReleaseOnExit: opts.ReleaseOnExit()}, run)
}

// newRecorder returns the event recorder for claims, with upstream's
// source component.
func newRecorder(ctx context.Context, kube kubernetes.Interface) record.EventRecorder {
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events(v1.NamespaceAll)})
	return broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: Component})
}
