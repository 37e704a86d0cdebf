package validator

import (
	"context"
	"net/http"
	"os"

	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	gatewayclientset "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/xns-csi/csi-provisioner/internal/shared/controllerrun"
	"github.com/xns-csi/csi-provisioner/internal/shared/features"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
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
	// Claims as protobuf; events with a client of their own, so a burst of
	// them cannot slow the caches' relists down, written by the controller
	// itself (see notices) with upstream's source component.
	env, err := controllerrun.New(ctx, &opts.Common, Component, scheme.Scheme)
	if err != nil {
		return err
	}
	gateway, err := gatewayclientset.NewForConfig(env.Config)
	if err != nil {
		return err
	}
	api, err := versioned.NewForConfig(env.Config)
	if err != nil {
		return err
	}
	metrics, err := NewMetrics(env.Registry)
	if err != nil {
		return err
	}
	controller, err := New(Config{Kube: env.Kube, Events: env.Events.CoreV1(), Gateway: gateway, API: api,
		ResyncPeriod: opts.ResyncPeriod, CrossNamespace: features.CrossNamespaceEnabled(opts.FeatureGate),
		SnapshotLinks: opts.CrossNamespaceSnapshot, Metrics: metrics, WatchList: true})
	if err != nil {
		return err
	}
	ready := &readiness{controller: controller}
	// Under leader election a replica is ready as a standby until it leads.
	ready.standby.Store(opts.LeaderElection.Enabled)
	klog.FromContext(ctx).Info("Deciding claims as the csi-provisioner sidecars do",
		"crossNamespace", features.CrossNamespaceEnabled(opts.FeatureGate), "crossNamespaceSnapshot", opts.CrossNamespaceSnapshot,
		"gogc", gcPercent)
	return env.Run(ctx, controllerrun.Controller{LockName: lockName, Endpoints: map[string]http.Handler{"/readyz": ready},
		Run: func(ctx context.Context) { controller.Run(ctx, opts.WorkerThreads) }})
}
