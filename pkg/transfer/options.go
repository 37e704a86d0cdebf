package transfer

import (
	"errors"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/xns-csi/csi-provisioner/pkg/command"
	"github.com/xns-csi/csi-provisioner/pkg/features"
	"github.com/xns-csi/csi-provisioner/pkg/leader"
)

// Component is the controller's name: its events' source, its client's
// user agent, its Lease.
const Component = "storage-transfer-controller"

// Options are the controller's command-line settings, under the names of
// the sidecar's and the validator's flags. See AddFlags.
type Options struct {
	// Kubeconfig is --kubeconfig; without it the in-cluster configuration
	// is used.
	Kubeconfig string
	// KubeAPIQPS and KubeAPIBurst limit the API client, events included.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// ResyncPeriod is the informers' --resync-period (0 disables resyncs).
	ResyncPeriod time.Duration
	// WorkerThreads is --worker-threads: transfers worked on at once.
	WorkerThreads int
	// Retention is how long a completed transfer's request and accept are
	// kept before they are deleted.
	Retention time.Duration

	LeaderElection leader.Options

	// HTTPEndpoint is --http-endpoint (metrics, /healthz and
	// /healthz/leader-election); empty disables the server.
	HTTPEndpoint string
	MetricsPath  string

	ShowVersion bool

	// FeatureGate holds --feature-gates (ReleaseLeaderElectionOnExit and
	// the logging gates).
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
		WorkerThreads:  4,
		Retention:      time.Minute,
		LeaderElection: leader.NewOptions(),
		MetricsPath:    "/metrics",
		FeatureGate:    features.NewGate(),
		Logging:        logsapi.NewLoggingConfiguration(),
	}
}

// ParseFlags parses the command line (args without the program name) into
// Options and validates them: the one entry point of
// cmd/storage-transfer-controller.
func ParseFlags(args []string) (*Options, error) {
	return parseFlags(args, os.Stderr)
}

func parseFlags(args []string, output io.Writer) (*Options, error) {
	return command.ParseFlags(Component, args, output, NewOptions())
}

// AddFlags binds every option to a flag of fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Absolute path to the kubeconfig file. Required only when running out of cluster.")
	fs.BoolVar(&o.ShowVersion, "version", o.ShowVersion, "Show version.")
	fs.IntVar(&o.WorkerThreads, "worker-threads", o.WorkerThreads, "Number of transfers worked on at once.")
	fs.DurationVar(&o.ResyncPeriod, "resync-period", o.ResyncPeriod, "Resync interval of the controller; 0 disables resyncs.")
	fs.DurationVar(&o.Retention, "retention", o.Retention, "How long the StorageTransferRequest and StorageTransferAccept of a completed transfer are kept before the controller deletes them (an event in both namespaces records the transfer).")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "QPS to use while communicating with the kubernetes apiserver (events included).")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Burst to use while communicating with the kubernetes apiserver.")
	o.LeaderElection.AddFlags(fs)
	fs.StringVar(&o.HTTPEndpoint, "http-endpoint", o.HTTPEndpoint, "The TCP network address where the HTTP server for diagnostics, including metrics, /healthz and the leader election health check, will listen (example: `:8080`). The default is empty string, which means the server is disabled.")
	fs.StringVar(&o.MetricsPath, "metrics-path", o.MetricsPath, "The HTTP path where prometheus metrics will be exposed.")
	o.FeatureGate.AddFlag(fs)
	logsapi.AddFlags(o.Logging, fs)
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
	if o.Retention < 0 {
		errs = append(errs, errors.New("--retention must not be negative"))
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
