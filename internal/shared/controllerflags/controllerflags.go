// Package controllerflags holds the flags that this project's controllers
// beside the sidecar (the volume-data-source-validator and the
// storage-transfer-controller) share, under the names and defaults of the
// kubernetes-csi sidecars: the API client, the informers' resync, the
// workers, leader election, the HTTP endpoint, the feature gates and
// logging. A component embeds Common in its Options and adds its own.
package controllerflags

import (
	"errors"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/features"
	"github.com/xns-csi/csi-provisioner/internal/shared/leader"
)

// Common are the shared settings. See AddFlags.
type Common struct {
	// Kubeconfig is --kubeconfig; without it the in-cluster configuration
	// is used.
	Kubeconfig string
	// KubeAPIQPS and KubeAPIBurst limit the API client, events included.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// ResyncPeriod is the informers' --resync-period (0 disables resyncs).
	ResyncPeriod time.Duration
	// WorkerThreads is --worker-threads.
	WorkerThreads int

	LeaderElection leader.Options

	// HTTPEndpoint is --http-endpoint; empty disables the server.
	HTTPEndpoint string
	MetricsPath  string

	ShowVersion bool

	// FeatureGate holds --feature-gates: the sidecar's gates (among them
	// ReleaseLeaderElectionOnExit) and the logging gates.
	FeatureGate featuregate.MutableVersionedFeatureGate
	// Logging holds -v, --vmodule, --logging-format and the other
	// component-base logging flags.
	Logging *logsapi.LoggingConfiguration
}

// New returns the defaults with workers worker threads: client QPS 5 and
// burst 10, a 15 minute resync, leader election off, metrics on /metrics.
func New(workers int) Common {
	return Common{
		KubeAPIQPS:     5,
		KubeAPIBurst:   10,
		ResyncPeriod:   15 * time.Minute,
		WorkerThreads:  workers,
		LeaderElection: leader.NewOptions(),
		MetricsPath:    "/metrics",
		FeatureGate:    features.NewGate(),
		Logging:        logsapi.NewLoggingConfiguration(),
	}
}

// Help is the usage text of the flags whose meaning depends on the
// component.
type Help struct {
	WorkerThreads, ResyncPeriod, HTTPEndpoint string
}

// AddFlags binds the shared settings to flags of fs; AddGatesAndLogging
// adds --feature-gates and the logging flags, which a component adds
// last.
func (c *Common) AddFlags(fs *pflag.FlagSet, help Help) {
	fs.StringVar(&c.Kubeconfig, "kubeconfig", c.Kubeconfig, "Absolute path to the kubeconfig file. Required only when running out of cluster.")
	fs.BoolVar(&c.ShowVersion, "version", c.ShowVersion, "Show version.")
	fs.IntVar(&c.WorkerThreads, "worker-threads", c.WorkerThreads, help.WorkerThreads)
	fs.DurationVar(&c.ResyncPeriod, "resync-period", c.ResyncPeriod, help.ResyncPeriod)
	fs.Float32Var(&c.KubeAPIQPS, "kube-api-qps", c.KubeAPIQPS, "QPS to use while communicating with the kubernetes apiserver (events included).")
	fs.IntVar(&c.KubeAPIBurst, "kube-api-burst", c.KubeAPIBurst, "Burst to use while communicating with the kubernetes apiserver.")
	c.LeaderElection.AddFlags(fs)
	fs.StringVar(&c.HTTPEndpoint, "http-endpoint", c.HTTPEndpoint, help.HTTPEndpoint)
	fs.StringVar(&c.MetricsPath, "metrics-path", c.MetricsPath, "The HTTP path where prometheus metrics will be exposed.")
}

// AddGatesAndLogging binds --feature-gates and the logging flags.
func (c *Common) AddGatesAndLogging(fs *pflag.FlagSet) {
	c.FeatureGate.AddFlag(fs)
	logsapi.AddFlags(c.Logging, fs)
}

// Validate checks the shared settings and returns every problem. It
// changes nothing; ApplyLogging does.
func (c *Common) Validate() []error {
	var errs []error
	if c.KubeAPIQPS <= 0 || c.KubeAPIBurst < 1 {
		errs = append(errs, errors.New("--kube-api-qps and --kube-api-burst must be positive"))
	}
	if c.ResyncPeriod < 0 {
		errs = append(errs, errors.New("--resync-period must not be negative (0 disables resyncs)"))
	}
	if c.WorkerThreads < 1 {
		errs = append(errs, errors.New("--worker-threads must be at least 1"))
	}
	if c.HTTPEndpoint != "" && (c.MetricsPath == "" || c.MetricsPath[0] != '/') {
		errs = append(errs, errors.New("--metrics-path must start with /"))
	}
	if err := c.LeaderElection.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := logsapi.Validate(c.Logging, c.FeatureGate, nil).ToAggregate(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// VersionRequested reports --version.
func (c *Common) VersionRequested() bool { return c.ShowVersion }

// ApplyLogging configures the process-wide logger from -v, --vmodule and
// --logging-format. Call it once, after Validate.
func (c *Common) ApplyLogging() error {
	return logsapi.ValidateAndApply(c.Logging, c.FeatureGate)
}

// ReleaseOnExit reports the gate ReleaseLeaderElectionOnExit.
func (c *Common) ReleaseOnExit() bool {
	return c.FeatureGate.Enabled(features.ReleaseLeaderElectionOnExit)
}
