package sidecar

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/features"
	"github.com/xns-csi/csi-provisioner/internal/shared/leader"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/provisioner"
)

// Options are the sidecar's command-line settings. Flag names, types and
// defaults follow the upstream csi-provisioner v6.4.0 so its manifests work
// unchanged (see AddFlags and ParseFlags); the flags this sidecar adds are
// named in their help text.
type Options struct {
	// CSIAddress is the driver's socket (--csi-address).
	CSIAddress string
	// Kubeconfig is --kubeconfig, or the KUBECONFIG environment variable,
	// which wins over the flag as in the upstream csi-provisioner;
	// KubeconfigFromEnv says that it came from there.
	Kubeconfig        string
	KubeconfigFromEnv bool
	// Master is --master: the API server's URL, overriding the kubeconfig's.
	// Without it and a kubeconfig, the in-cluster configuration is used.
	Master string
	// KubeAPIQPS and KubeAPIBurst limit the main API client
	// (--kube-api-qps, a float64 as upstream, and --kube-api-burst).
	KubeAPIQPS   float64
	KubeAPIBurst int
	// Timeout bounds each CSI call (--timeout).
	Timeout time.Duration

	// WorkerThreads is --worker-threads; FinalizerThreads is
	// --cloning-protection-threads (alias --finalizer-threads): the workers
	// that add and release source-protection finalizers.
	WorkerThreads      int
	FinalizerThreads   int
	RetryIntervalStart time.Duration
	RetryIntervalMax   time.Duration
	// ResyncPeriod is this sidecar's --resync-period of its informers.
	ResyncPeriod time.Duration

	Volume provisioner.Options

	LeaderElection LeaderElectionOptions

	// HTTPEndpoint is --http-endpoint; MetricsAddress the deprecated
	// --metrics-address, which serves the same handlers. At most one is set
	// (Validate); HTTPAddress returns the one in use.
	HTTPEndpoint   string
	MetricsAddress string
	MetricsPath    string
	EnablePprof    bool

	Capacity       CapacityOptions
	NodeDeployment NodeDeploymentOptions
	OrphanSweep    OrphanSweepOptions

	ShowVersion bool

	// CrossNamespaceSnapshot is --cross-namespace-snapshot: claims whose
	// dataSourceRef is a VolumeSnapshotLink are restored from the linked
	// VolumeSnapshot (KEP-3294's alternative that needs no API-server gate).
	CrossNamespaceSnapshot bool

	// FeatureGate holds --feature-gates.
	FeatureGate featuregate.MutableVersionedFeatureGate
	// Logging holds -v, --vmodule, --logging-format and the other
	// component-base logging flags.
	Logging *logsapi.LoggingConfiguration
}

// LeaderElectionOptions are the --leader-election* flags of csi-lib-utils:
// the options every binary of this project shares (package leader), and
// the sidecar's --leader-election-labels.
type LeaderElectionOptions struct {
	leader.Options
	// Labels are put on the Lease while this replica holds it
	// (--leader-election-labels key:value,...).
	Labels map[string]string
}

// CapacityOptions are upstream's storage-capacity flags (--enable-capacity
// and the --capacity-* and --kube-api-capacity-* flags): CSIStorageCapacity
// objects, see capacity.go and package capacity.
type CapacityOptions struct {
	Enabled             bool
	ForImmediateBinding bool
	PollInterval        time.Duration
	// OwnerRefLevel is how many owners up from the sidecar's pod the owner
	// of CSIStorageCapacity objects is: -1 none, 0 the pod, 1 its
	// StatefulSet or DaemonSet, 2 a Deployment.
	OwnerRefLevel int
	Threads       int
	KubeAPIQPS    float32
	KubeAPIBurst  int
	// Namespace and PodName are the NAMESPACE and POD_NAME environment
	// variables, which upstream requires when Enabled.
	Namespace string
	PodName   string
}

// NodeDeploymentOptions are upstream's distributed-provisioning flags
// (--node-deployment*): one sidecar per node next to a node-local driver,
// see nodedeployment.go and package nodedeployment.
type NodeDeploymentOptions struct {
	Enabled          bool
	ImmediateBinding bool
	BaseDelay        time.Duration
	MaxDelay         time.Duration
	// NodeName is the NODE_NAME environment variable, required when Enabled.
	NodeName string
}

// OrphanSweepOptions hold upstream's --snapshot-orphan-sweep-interval:
// upstream lists VolumeSnapshots that interval apart and removes
// source-protection finalizers no claim needs any more (0 disables it).
// This sidecar needs no separate sweep: source protection re-examines every
// snapshot that carries the finalizer when its cache starts and on every
// informer resync (--resync-period), besides reacting to each change. The
// interval is accepted and validated, and changes nothing.
type OrphanSweepOptions struct {
	Interval time.Duration
}

// NewOptions returns the defaults, which are the flags' defaults.
func NewOptions() *Options {
	return &Options{
		CSIAddress:         "/run/csi/socket",
		KubeAPIQPS:         5,
		KubeAPIBurst:       10,
		Timeout:            10 * time.Second,
		WorkerThreads:      100,
		FinalizerThreads:   1,
		RetryIntervalStart: time.Second,
		RetryIntervalMax:   5 * time.Minute,
		ResyncPeriod:       15 * time.Minute,
		Volume: provisioner.Options{
			VolumeNamePrefix:            "pvc",
			VolumeNameUUIDLength:        -1,
			ImmediateTopology:           true,
			PreventVolumeModeConversion: true,
		},
		LeaderElection: LeaderElectionOptions{Options: leader.NewOptions()},
		MetricsPath:    "/metrics",
		Capacity: CapacityOptions{
			PollInterval:  time.Minute,
			OwnerRefLevel: 1,
			Threads:       1,
			KubeAPIQPS:    1,
			KubeAPIBurst:  5,
		},
		NodeDeployment: NodeDeploymentOptions{
			ImmediateBinding: true,
			BaseDelay:        20 * time.Second,
			MaxDelay:         time.Minute,
		},
		OrphanSweep: OrphanSweepOptions{Interval: 5 * time.Minute},
		FeatureGate: features.NewGate(),
		Logging:     logsapi.NewLoggingConfiguration(),
	}
}

// HTTPAddress is the address of the HTTP server: --http-endpoint, or the
// deprecated --metrics-address; empty when there is none.
func (o *Options) HTTPAddress() string {
	if o.MetricsAddress != "" {
		return o.MetricsAddress
	}
	return o.HTTPEndpoint
}

// Validate checks the options. It changes nothing; ApplyLogging does.
func (o *Options) Validate() error {
	var errs []error
	if o.CSIAddress == "" {
		errs = append(errs, errors.New("--csi-address must be set"))
	}
	if o.Timeout <= 0 {
		errs = append(errs, errors.New("--timeout must be positive"))
	}
	if o.WorkerThreads < 1 || o.FinalizerThreads < 1 {
		errs = append(errs, errors.New("--worker-threads and --cloning-protection-threads must be at least 1"))
	}
	if o.RetryIntervalStart <= 0 || o.RetryIntervalMax < o.RetryIntervalStart {
		errs = append(errs, fmt.Errorf("--retry-interval-start (%v) must be positive and not above --retry-interval-max (%v)", o.RetryIntervalStart, o.RetryIntervalMax))
	}
	if o.KubeAPIQPS <= 0 || o.KubeAPIBurst < 1 {
		errs = append(errs, errors.New("--kube-api-qps and --kube-api-burst must be positive"))
	}
	if o.Volume.VolumeNamePrefix == "" {
		errs = append(errs, errors.New("--volume-name-prefix must not be empty"))
	}
	if o.Volume.VolumeNameUUIDLength == 0 {
		// Every claim would get the same volume name, hence the same volume.
		errs = append(errs, errors.New("--volume-name-uuid-length must be negative (whole UID) or positive"))
	}
	if o.HTTPEndpoint != "" && o.MetricsAddress != "" {
		errs = append(errs, errors.New("only one of --metrics-address and --http-endpoint can be set"))
	}
	errs = append(errs, o.LeaderElection.Validate(), o.Capacity.validate(), o.NodeDeployment.validate(), o.OrphanSweep.validate())
	if err := logsapi.Validate(o.Logging, o.FeatureGate, nil).ToAggregate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (c CapacityOptions) validate() error {
	if !c.Enabled {
		return nil
	}
	var errs []error
	if c.PollInterval <= 0 {
		errs = append(errs, errors.New("--capacity-poll-interval must be positive"))
	}
	if c.Threads < 1 {
		errs = append(errs, errors.New("--capacity-threads must be at least 1"))
	}
	if c.OwnerRefLevel < -1 {
		errs = append(errs, errors.New("--capacity-ownerref-level must be -1 (no owner) or more"))
	}
	if c.KubeAPIQPS <= 0 || c.KubeAPIBurst < 1 {
		errs = append(errs, errors.New("--kube-api-capacity-qps and --kube-api-capacity-burst must be positive"))
	}
	// The same requirements, with the same variables, as upstream's.
	if c.Namespace == "" {
		errs = append(errs, errors.New("--enable-capacity needs the NAMESPACE environment variable (the pod's namespace, from the downward API)"))
	}
	if c.OwnerRefLevel >= 0 && c.PodName == "" {
		errs = append(errs, errors.New("--enable-capacity with --capacity-ownerref-level >= 0 needs the POD_NAME environment variable (the pod's name, from the downward API)"))
	}
	return errors.Join(errs...)
}

func (n NodeDeploymentOptions) validate() error {
	if !n.Enabled {
		return nil
	}
	var errs []error
	if n.NodeName == "" {
		errs = append(errs, errors.New("--node-deployment needs the NODE_NAME environment variable (the node's name, from the downward API: spec.nodeName)"))
	}
	if n.BaseDelay < 0 || n.MaxDelay < n.BaseDelay {
		errs = append(errs, fmt.Errorf("--node-deployment-base-delay (%v) must not be negative nor above --node-deployment-max-delay (%v)", n.BaseDelay, n.MaxDelay))
	}
	return errors.Join(errs...)
}

func (s OrphanSweepOptions) validate() error {
	if s.Interval < 0 {
		return errors.New("--snapshot-orphan-sweep-interval must not be negative (0 disables the sweep)")
	}
	return nil
}

// VersionRequested reports --version.
func (o *Options) VersionRequested() bool { return o.ShowVersion }

// ApplyLogging configures the process-wide logger from -v, --vmodule and
// --logging-format. Call it once, after Validate.
func (o *Options) ApplyLogging() error {
	return logsapi.ValidateAndApply(o.Logging, o.FeatureGate)
}
