package sidecar

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/xns-csi/csi-provisioner/pkg/features"
	"github.com/xns-csi/csi-provisioner/pkg/provisioner"
)

// Options are the sidecar's command-line settings. Flag names and defaults
// follow the upstream csi-provisioner so its manifests work unchanged.
type Options struct {
	CSIAddress string
	Kubeconfig string
	Timeout    time.Duration

	WorkerThreads      int
	FinalizerThreads   int
	RetryIntervalStart time.Duration
	RetryIntervalMax   time.Duration
	KubeAPIQPS         float32
	KubeAPIBurst       int
	ResyncPeriod       time.Duration

	Volume provisioner.Options

	LeaderElection              bool
	LeaderElectionNamespace     string
	LeaderElectionLeaseDuration time.Duration
	LeaderElectionRenewDeadline time.Duration
	LeaderElectionRetryPeriod   time.Duration

	HTTPEndpoint string
	MetricsPath  string
	EnablePprof  bool

	ShowVersion bool

	// FeatureGate holds --feature-gates.
	FeatureGate featuregate.MutableVersionedFeatureGate
	// Logging holds -v, --vmodule and --logging-format.
	Logging *logsapi.LoggingConfiguration
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	gate := features.NewGate()
	if err := logsapi.AddFeatureGates(gate); err != nil {
		panic(err) // registering the logging gates on a fresh gate cannot fail
	}
	return &Options{
		CSIAddress:         "/run/csi/socket",
		Timeout:            10 * time.Second,
		WorkerThreads:      100,
		FinalizerThreads:   4,
		RetryIntervalStart: time.Second,
		RetryIntervalMax:   5 * time.Minute,
		KubeAPIQPS:         5,
		KubeAPIBurst:       10,
		ResyncPeriod:       15 * time.Minute,
		Volume: provisioner.Options{
			VolumeNamePrefix:            "pvc",
			VolumeNameUUIDLength:        -1,
			ImmediateTopology:           true,
			PreventVolumeModeConversion: true,
		},
		LeaderElectionLeaseDuration: 15 * time.Second,
		LeaderElectionRenewDeadline: 10 * time.Second,
		LeaderElectionRetryPeriod:   5 * time.Second,
		MetricsPath:                 "/metrics",
		FeatureGate:                 gate,
		Logging:                     logsapi.NewLoggingConfiguration(),
	}
}

// AddFlags binds every option to a flag of fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.CSIAddress, "csi-address", o.CSIAddress, "Address of the CSI driver's unix domain socket.")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig; only needed when running outside the cluster.")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "Timeout of each CSI call. CreateVolume is retried with the same name after a timeout, so a short value is safe.")
	fs.IntVar(&o.WorkerThreads, "worker-threads", o.WorkerThreads, "Number of claims and volumes processed at the same time.")
	fs.IntVar(&o.FinalizerThreads, "finalizer-threads", o.FinalizerThreads, "Number of workers removing source-protection finalizers from snapshots and cloned claims.")
	fs.DurationVar(&o.RetryIntervalStart, "retry-interval-start", o.RetryIntervalStart, "Initial retry interval of a failed provisioning or deletion; it doubles with each failure up to --retry-interval-max. Claims waiting for a ReferenceGrant or snapshot are re-queued at once when it changes, independently of this backoff.")
	fs.DurationVar(&o.RetryIntervalMax, "retry-interval-max", o.RetryIntervalMax, "Maximum retry interval of a failed provisioning or deletion.")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "Queries per second to the Kubernetes API server.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Burst of queries to the Kubernetes API server.")
	fs.DurationVar(&o.ResyncPeriod, "resync-period", o.ResyncPeriod, "Resync period of the informers.")

	fs.StringVar(&o.Volume.VolumeNamePrefix, "volume-name-prefix", o.Volume.VolumeNamePrefix, "Prefix of the CSI volume names; a volume is named <prefix>-<claim UID>.")
	fs.IntVar(&o.Volume.VolumeNameUUIDLength, "volume-name-uuid-length", o.Volume.VolumeNameUUIDLength, "Length of the claim UID in volume names, dashes removed; negative keeps the whole UID with its dashes (the volume is then named like its PV).")
	fs.StringVar(&o.Volume.DefaultFSType, "default-fstype", o.Volume.DefaultFSType, "Filesystem type of volumes whose StorageClass sets no csi.storage.k8s.io/fstype; empty leaves it to the driver.")
	fs.BoolVar(&o.Volume.ExtraCreateMetadata, "extra-create-metadata", o.Volume.ExtraCreateMetadata, "Pass the claim's name and namespace and the PV's name to CreateVolume as csi.storage.k8s.io/* parameters.")
	fs.BoolVar(&o.Volume.StrictTopology, "strict-topology", o.Volume.StrictTopology, "Restrict a late-bound volume to the topology of the node the scheduler selected.")
	fs.BoolVar(&o.Volume.ImmediateTopology, "immediate-topology", o.Volume.ImmediateTopology, "Offer every topology segment of the cluster for immediately bound volumes without allowedTopologies; when false the driver chooses.")
	fs.BoolVar(&o.Volume.ControllerPublishReadOnly, "controller-publish-readonly", o.Volume.ControllerPublishReadOnly, "Mark ReadOnlyMany volumes read-only in their PV so they are published read-only.")
	fs.BoolVar(&o.Volume.PreventVolumeModeConversion, "prevent-volume-mode-conversion", o.Volume.PreventVolumeModeConversion, "Refuse to restore a snapshot with another volume mode than its source unless its VolumeSnapshotContent allows it.")

	fs.BoolVar(&o.LeaderElection, "leader-election", o.LeaderElection, "Run several replicas with one active leader (Lease).")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "Namespace of the leader-election Lease; the sidecar's own namespace if empty.")
	fs.DurationVar(&o.LeaderElectionLeaseDuration, "leader-election-lease-duration", o.LeaderElectionLeaseDuration, "How long non-leaders wait before taking over an unrenewed lease.")
	fs.DurationVar(&o.LeaderElectionRenewDeadline, "leader-election-renew-deadline", o.LeaderElectionRenewDeadline, "How long the leader retries renewing before giving up leadership.")
	fs.DurationVar(&o.LeaderElectionRetryPeriod, "leader-election-retry-period", o.LeaderElectionRetryPeriod, "How often candidates try to acquire or renew leadership.")

	fs.StringVar(&o.HTTPEndpoint, "http-endpoint", o.HTTPEndpoint, "Address (e.g. :8080) of the HTTP server for metrics, /healthz/leader-election and /readyz; empty disables it.")
	fs.StringVar(&o.MetricsPath, "metrics-path", o.MetricsPath, "Path of the Prometheus metrics on --http-endpoint.")
	fs.BoolVar(&o.EnablePprof, "enable-pprof", o.EnablePprof, "Serve /debug/pprof on --http-endpoint.")
	fs.BoolVar(&o.ShowVersion, "version", o.ShowVersion, "Print the version and exit.")

	o.FeatureGate.AddFlag(fs)
	logsapi.AddFlags(o.Logging, fs)
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
		errs = append(errs, errors.New("--worker-threads and --finalizer-threads must be at least 1"))
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
	if o.LeaderElection && o.LeaderElectionRenewDeadline >= o.LeaderElectionLeaseDuration {
		errs = append(errs, errors.New("--leader-election-renew-deadline must be shorter than --leader-election-lease-duration"))
	}
	if err := logsapi.Validate(o.Logging, o.FeatureGate, nil).ToAggregate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ApplyLogging configures the process-wide logger from -v, --vmodule and
// --logging-format. Call it once, after Validate.
func (o *Options) ApplyLogging() error {
	return logsapi.ValidateAndApply(o.Logging, o.FeatureGate)
}
