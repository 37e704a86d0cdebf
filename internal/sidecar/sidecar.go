// Package sidecar wires the provisioner sidecar together: it connects to the
// CSI driver, builds the clients, informers and controllers, serves the HTTP
// endpoint and runs everything under leader election.
package sidecar

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	csimetrics "github.com/kubernetes-csi/csi-lib-utils/metrics"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
	libmetrics "sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller/metrics"

	"github.com/xns-csi/csi-provisioner/internal/shared/features"
	"github.com/xns-csi/csi-provisioner/internal/shared/httpendpoint"
	"github.com/xns-csi/csi-provisioner/internal/shared/kubeclients"
	"github.com/xns-csi/csi-provisioner/internal/shared/leader"
	"github.com/xns-csi/csi-provisioner/internal/shared/requeue"
	csiclient "github.com/xns-csi/csi-provisioner/internal/sidecar/csi"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/metrics"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/nodedeployment"

	// Register client-go's request metrics (rest_client_requests_total and
	// friends: the sidecar's API cost), the leader-election metrics
	// (leader_election_master_status, as upstream) and the workqueue
	// metrics with the legacy registry served on /metrics.
	_ "k8s.io/component-base/metrics/prometheus/clientgo/leaderelection"
	_ "k8s.io/component-base/metrics/prometheus/restclient"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
)

// optionalAPIPollInterval is how often discovery is asked whether the
// ReferenceGrant and snapshot CRDs appeared, while they are absent.
const optionalAPIPollInterval = 5 * time.Second

// Run runs the sidecar until ctx is done or it fails to start.
func Run(ctx context.Context, opts *Options) error {
	logger := klog.FromContext(ctx)
	config, err := restConfig(ctx, opts)
	if err != nil {
		return err
	}
	csiMetrics := csimetrics.NewCSIMetricsManagerWithOptions("",
		csimetrics.WithSubsystem(csimetrics.SubsystemSidecar), csimetrics.WithProcessStartTime(false))
	logger.Info("Connecting to the CSI driver", "address", opts.CSIAddress)
	driver, err := csiclient.Connect(ctx, csiclient.Config{Address: opts.CSIAddress, Timeout: opts.Timeout,
		MetricsManager: csiMetrics, ExitOnConnectionLoss: true})
	if err != nil {
		return fmt.Errorf("connecting to the CSI driver at %s: %w", opts.CSIAddress, err)
	}
	defer driver.Close()
	identity, err := probeDriver(ctx, driver)
	if err != nil {
		return err
	}
	if !opts.FeatureGate.Enabled(features.Topology) {
		// As upstream: topology needs the driver's capability and the gate.
		identity.caps.AccessibilityConstraints = false
	}
	csiMetrics.SetDriverName(identity.name)
	logger.Info("Connected to CSI driver", "driver", identity.name, "capabilities", fmt.Sprintf("%+v", identity.caps))
	if identity.node, err = localNode(ctx, opts, driver); err != nil {
		return err
	}

	registry := prometheus.NewRegistry()
	ownMetrics, err := metrics.New(registry)
	if err != nil {
		return err
	}
	provisionMetrics := libmetrics.New("controller")
	registry.MustRegister(provisionMetrics.PersistentVolumeClaimProvisionTotal, provisionMetrics.PersistentVolumeClaimProvisionFailedTotal,
		provisionMetrics.PersistentVolumeClaimProvisionDurationSeconds, provisionMetrics.PersistentVolumeDeleteTotal,
		provisionMetrics.PersistentVolumeDeleteFailedTotal, provisionMetrics.PersistentVolumeDeleteDurationSeconds)

	// Core objects as protobuf; events with a client of their own (see
	// eventsApart).
	kube, events, err := kubeclients.Core(config)
	if err != nil {
		return err
	}
	var capacityKube kubernetes.Interface
	if opts.Capacity.Enabled {
		// Capacity objects get a client and rate limit of their own, as
		// upstream: --kube-api-capacity-qps and --kube-api-capacity-burst.
		capacityConfig := kubeclients.Protobuf(config)
		capacityConfig.QPS, capacityConfig.Burst = opts.Capacity.KubeAPIQPS, opts.Capacity.KubeAPIBurst
		if capacityKube, err = kubernetes.NewForConfig(capacityConfig); err != nil {
			return err
		}
	}
	run, ready, err := build(ctx, buildConfig{opts: opts, rest: config, kube: kube, events: events, capacityKube: capacityKube,
		driver: driver, identity: identity, metrics: ownMetrics, provisionMetrics: &provisionMetrics, registerer: registry})
	if err != nil {
		return err
	}

	var mux *http.ServeMux
	if addr := opts.HTTPAddress(); addr != "" {
		mux = newMux(opts, csiMetrics, registry, ready)
		if _, err := httpendpoint.Serve(ctx, addr, mux); err != nil {
			return err
		}
	}
	if !opts.LeaderElection.Enabled {
		run(ctx)
		return nil
	}
	// A standby replica is ready to take over: report it ready so rolling
	// updates of a multi-replica Deployment make progress. Liveness of the
	// leader is /healthz/leader-election.
	ready.set()
	return runAsLeader(ctx, opts, config, identity.name, mux, run)
}

// newMux returns the HTTP endpoint's handlers: at --metrics-path the CSI
// call metrics of csiMetrics, those of registry and those component-base
// registers globally (legacyGatherer); the profiler with --enable-pprof;
// /readyz (ready) and /healthz. Leader election adds its own check.
func newMux(opts *Options, csiMetrics csimetrics.CSIMetricsManager, registry prometheus.Gatherer, ready http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	csiMetrics.WithAdditionalRegistry(registry)
	csiMetrics.WithAdditionalRegistry(legacyGatherer())
	csiMetrics.RegisterToServer(mux, opts.MetricsPath)
	if opts.EnablePprof {
		csiMetrics.RegisterPprofToServer(mux)
	}
	mux.Handle("/readyz", ready)
	mux.Handle("/healthz", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	return mux
}

// runAsLeader runs run while this replica holds the Lease named after the
// driver, as upstream, with the --leader-election* flags (package leader,
// shared with the other binaries of this project).
func runAsLeader(ctx context.Context, opts *Options, config *rest.Config, driverName string, mux *http.ServeMux, run func(context.Context)) error {
	// A client of its own, so a busy provisioner cannot starve lease renewal.
	leClient, err := kubernetes.NewForConfig(rest.CopyConfig(config))
	if err != nil {
		return err
	}
	return leader.Run(ctx, leader.Config{
		Options: opts.LeaderElection.Options, Client: leClient, LockName: driverName, Labels: opts.LeaderElection.Labels, Mux: mux,
		ReleaseOnExit: opts.FeatureGate.Enabled(features.ReleaseLeaderElectionOnExit),
	}, run)
}

type driverIdentity struct {
	name string
	caps csiclient.Capabilities
	// node is the node this sidecar runs on, as the driver describes it,
	// with --node-deployment; nil otherwise.
	node *nodedeployment.Local
}

// probeDriver waits for the driver and reads its name and capabilities. A
// driver that cannot create volumes is refused at start.
func probeDriver(ctx context.Context, driver *csiclient.Client) (driverIdentity, error) {
	if err := driver.Probe(ctx); err != nil {
		return driverIdentity{}, fmt.Errorf("probing the CSI driver: %w", err)
	}
	name, err := driver.DriverName(ctx)
	if err != nil {
		return driverIdentity{}, fmt.Errorf("reading the CSI driver's name: %w", err)
	}
	caps, err := driver.Capabilities(ctx)
	if err != nil {
		return driverIdentity{}, fmt.Errorf("reading the CSI driver's capabilities: %w", err)
	}
	if !caps.ControllerService || !caps.CreateDeleteVolume {
		return driverIdentity{}, fmt.Errorf("CSI driver %q has no controller service with CREATE_DELETE_VOLUME: it cannot provision volumes", name)
	}
	return driverIdentity{name: name, caps: caps}, nil
}

// restConfig builds the API client configuration as upstream does: from
// --master and the kubeconfig (--kubeconfig, or KUBECONFIG, which wins) when
// either is set, else in-cluster; with --kube-api-qps and --kube-api-burst.
// Unlike upstream, it asks for no compression (kubeclients.Uncompressed).
func restConfig(ctx context.Context, opts *Options) (*rest.Config, error) {
	var config *rest.Config
	var err error
	if opts.Master != "" || opts.Kubeconfig != "" {
		if opts.KubeconfigFromEnv {
			klog.FromContext(ctx).Info("Using the kubeconfig named by the KUBECONFIG environment variable, which takes precedence over --kubeconfig", "kubeconfig", opts.Kubeconfig)
		}
		config, err = clientcmd.BuildConfigFromFlags(opts.Master, opts.Kubeconfig)
	} else {
		config, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("building the Kubernetes client configuration: %w", err)
	}
	config.QPS, config.Burst = float32(opts.KubeAPIQPS), opts.KubeAPIBurst
	kubeclients.Uncompressed(config)
	config.UserAgent = "csi-provisioner"
	if host, err := os.Hostname(); err == nil {
		config.UserAgent += "/" + host
	}
	return config, nil
}

// newRecorder returns an event recorder for claims.
func newRecorder(ctx context.Context, kube kubernetes.Interface, driverName string) record.EventRecorder {
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events(v1.NamespaceAll)})
	return broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: "csi-provisioner-" + driverName})
}

// libOptions are the ProvisionController settings derived from the flags.
func libOptions(opts *Options, claims *requeue.Claims, f *informerSet, m *libmetrics.Metrics) []func(*controller.ProvisionController) error {
	return []func(*controller.ProvisionController) error{
		controller.LeaderElection(false), // done around the whole sidecar instead
		controller.Threadiness(opts.WorkerThreads),
		controller.RateLimiter(workqueue.NewTypedItemExponentialFailureRateLimiter[string](opts.RetryIntervalStart, opts.RetryIntervalMax)),
		controller.FailedProvisionThreshold(0),
		controller.FailedDeleteThreshold(0),
		controller.AddFinalizer(true),
		controller.ResyncPeriod(opts.ResyncPeriod),
		controller.ClaimsInformer(claims),
		controller.VolumesInformer(f.volumes),
		controller.ClassesInformer(f.classes),
		controller.MetricsInstance(*m),
	}
}
