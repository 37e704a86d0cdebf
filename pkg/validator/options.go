package validator

import (
	"errors"
	"time"

	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/xns-csi/csi-provisioner/pkg/features"
	"github.com/xns-csi/csi-provisioner/pkg/leader"
)

// Options are the validator's command-line settings: the upstream
// volume-data-source-validator's flags, under its names and defaults, plus
// those that say how the sidecars whose decisions it reports are set
// (--feature-gates, --cross-namespace-snapshot) and the client's rate
// limit. See AddFlags.
type Options struct {
	// Kubeconfig is --kubeconfig; without it the in-cluster configuration
	// is used.
	Kubeconfig string
	// KubeAPIQPS and KubeAPIBurst limit the API client, events included.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// ResyncPeriod is the informers' --resync-period (0 disables resyncs).
	ResyncPeriod time.Duration
	// WorkerThreads is --worker-threads: claims decided at once.
	WorkerThreads int

	LeaderElection leader.Options

	// HTTPEndpoint is --http-endpoint (metrics, /healthz, /readyz and
	// /healthz/leader-election); empty disables the server.
	HTTPEndpoint string
	MetricsPath  string

	// CrossNamespaceSnapshot is --cross-namespace-snapshot: claims naming a
	// VolumeSnapshotLink are decided as the sidecars with that flag decide
	// them (the link, its snapshot's namespace and grant), rather than as
	// a populator's kind.
	CrossNamespaceSnapshot bool

	ShowVersion bool

	// FeatureGate holds --feature-gates, the sidecar's gates:
	// CrossNamespaceSourceProvisioning says whether the sidecars provision
	// from other namespaces at all; ReleaseLeaderElectionOnExit releases
	// the Lease on exit.
	FeatureGate featuregate.MutableVersionedFeatureGate
	// Logging holds -v, --vmodule, --logging-format and the other
	// component-base logging flags.
	Logging *logsapi.LoggingConfiguration
}

// NewOptions returns the defaults, which are the flags' defaults.
func NewOptions() *Options {
	return &Options{
		KubeAPIQPS:     5,
		KubeAPIBurst:   10,
		ResyncPeriod:   15 * time.Minute,
		WorkerThreads:  10,
		LeaderElection: leader.NewOptions(),
		MetricsPath:    "/metrics",
		FeatureGate:    features.NewGate(),
		Logging:        logsapi.NewLoggingConfiguration(),
	}
}

// Validate checks the options. It changes nothing; ApplyLogging does.
func (o *Options) Validate() error {
	var errs []error
	if o.KubeAPIQPS <= 0 || o.KubeAPIBurst < 1 {
		errs = append(errs, errors.New("--kube-api-qps and --kube-api-burst must be positive"))
	}
	if o.ResyncPeriod < 0 {
		errs = append(errs, errors.New("--resync-period must not be negative (0 disables resyncs)"))
	}
	if o.WorkerThreads < 1 {
		errs = append(errs, errors.New("--worker-threads must be at least 1"))
	}
	if o.HTTPEndpoint != "" && (o.MetricsPath == "" || o.MetricsPath[0] != '/') {
		errs = append(errs, errors.New("--metrics-path must start with /"))
	}
	errs = append(errs, o.LeaderElection.Validate())
	if err := logsapi.Validate(o.Logging, o.FeatureGate, nil).ToAggregate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// VersionRequested reports --version.
func (o *Options) VersionRequested() bool { return o.ShowVersion }

// ApplyLogging configures the process-wide logger from -v, --vmodule and
// --logging-format. Call it once, after Validate.
func (o *Options) ApplyLogging() error {
	return logsapi.ValidateAndApply(o.Logging, o.FeatureGate)
}
