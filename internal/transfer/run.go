package transfer

import (
	"context"

	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/xns-csi/csi-provisioner/internal/shared/controllerrun"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
)

// Run runs the controller until ctx is done or it fails to start.
func Run(ctx context.Context, opts *Options) error {
	// The recorder's kinds: requests and accepts besides the core objects.
	kinds, addKinds := runtime.NewScheme(), runtime.SchemeBuilder{scheme.AddToScheme, transferv1alpha1.AddToScheme}
	if err := addKinds.AddToScheme(kinds); err != nil {
		return err
	}
	env, err := controllerrun.New(ctx, &opts.Common, Component, kinds)
	if err != nil {
		return err
	}
	snapshots, err := snapclientset.NewForConfig(env.Config)
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
	controller, err := New(Config{Kube: env.Kube, Snapshot: snapshots, API: api, Recorder: env.Recorder,
		ResyncPeriod: opts.ResyncPeriod, Retention: opts.Retention, Metrics: metrics})
	if err != nil {
		return err
	}
	if err := env.Registry.Register(controller.Collector()); err != nil {
		return err
	}
	return env.Run(ctx, controllerrun.Controller{LockName: Component,
		Run: func(ctx context.Context) { controller.Run(ctx, opts.WorkerThreads) }})
}
