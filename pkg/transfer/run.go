package transfer

import (
	"context"
	"net/http"

	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics/legacyregistry"

	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
	"github.com/xns-csi/csi-provisioner/pkg/httpendpoint"
	"github.com/xns-csi/csi-provisioner/pkg/kubeclients"
	"github.com/xns-csi/csi-provisioner/pkg/leader"

	// Register client-go's request metrics, the leader-election metrics
	// and the workqueue metrics with the legacy registry served on
	// --metrics-path, as the sidecar does.
	_ "k8s.io/component-base/metrics/prometheus/clientgo/leaderelection"
	_ "k8s.io/component-base/metrics/prometheus/restclient"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
)

// Run runs the controller until ctx is done or it fails to start.
func Run(ctx context.Context, opts *Options) error {
	config, err := kubeclients.RestConfig(opts.Kubeconfig, Component)
	if err != nil {
		return err
	}
	config.QPS, config.Burst = opts.KubeAPIQPS, opts.KubeAPIBurst
	kube, events, err := kubeclients.Core(config)
	if err != nil {
		return err
	}
	snapshots, err := snapclientset.NewForConfig(config)
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
	recorder, err := newRecorder(ctx, events)
	if err != nil {
		return err
	}
	controller, err := New(Config{Kube: kube, Snapshot: snapshots, API: api, Recorder: recorder,
		ResyncPeriod: opts.ResyncPeriod, Retention: opts.Retention, Metrics: metrics})
	if err != nil {
		return err
	}
	var mux *http.ServeMux
	if opts.HTTPEndpoint != "" {
		mux = http.NewServeMux()
		mux.Handle(opts.MetricsPath, promhttp.HandlerFor(prometheus.Gatherers{registry, legacyregistry.DefaultGatherer}, promhttp.HandlerOpts{}))
		mux.Handle("/healthz", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
		if _, err := httpendpoint.Serve(ctx, opts.HTTPEndpoint, mux); err != nil {
			return err
		}
	}
	run := func(ctx context.Context) { controller.Run(ctx, opts.WorkerThreads) }
	if !opts.LeaderElection.Enabled {
		run(ctx)
		return nil
	}
	// A client of its own, so busy workers cannot starve lease renewal.
	leClient, err := kubernetes.NewForConfig(rest.CopyConfig(config))
	if err != nil {
		return err
	}
	return leader.Run(ctx, leader.Config{Options: opts.LeaderElection, Client: leClient, LockName: Component, Mux: mux,
		ReleaseOnExit: opts.ReleaseOnExit()}, run)
}

// newRecorder returns the event recorder for requests and accepts, whose
// kinds it knows.
func newRecorder(ctx context.Context, kube kubernetes.Interface) (record.EventRecorder, error) {
	s := runtime.NewScheme()
	if err := scheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := transferv1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events(v1.NamespaceAll)})
	return broadcaster.NewRecorder(s, v1.EventSource{Component: Component}), nil
}
