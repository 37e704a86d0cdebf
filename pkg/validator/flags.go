package validator

import (
	"io"
	"os"

	"github.com/spf13/pflag"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/xns-csi/csi-provisioner/pkg/command"
)

// ParseFlags parses the validator's command line (args without the program
// name) into Options and validates them: the one entry point of
// cmd/volume-data-source-validator. -h and --help print the usage to
// stderr and return pflag.ErrHelp; parse and validation errors are
// returned, not printed.
func ParseFlags(args []string) (*Options, error) {
	return parseFlags(args, os.Stderr)
}

func parseFlags(args []string, output io.Writer) (*Options, error) {
	return command.ParseFlags(Component, args, output, NewOptions())
}

// AddFlags binds every option to a flag of fs. The names, types and
// defaults of the upstream volume-data-source-validator's flags are kept
// (--kubeconfig, --worker-threads, --leader-election*, --http-endpoint,
// --metrics-path, --version, -v; --resync-period from its earlier
// releases), so its manifests work unchanged.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Absolute path to the kubeconfig file. Required only when running out of cluster.")
	fs.BoolVar(&o.ShowVersion, "version", o.ShowVersion, "Show version.")
	fs.IntVar(&o.WorkerThreads, "worker-threads", o.WorkerThreads, "Number of worker threads.")
	fs.DurationVar(&o.ResyncPeriod, "resync-period", o.ResyncPeriod, "Resync interval of the controller; 0 disables resyncs. Claims are decided again on every change of what they depend on, so a resync only re-checks them (a claim is told each state once).")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "QPS to use while communicating with the kubernetes apiserver (events included).")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Burst to use while communicating with the kubernetes apiserver.")
	o.LeaderElection.AddFlags(fs)
	fs.StringVar(&o.HTTPEndpoint, "http-endpoint", o.HTTPEndpoint, "The TCP network address where the HTTP server for diagnostics, including metrics, /healthz, /readyz and the leader election health check, will listen (example: `:8080`). The default is empty string, which means the server is disabled.")
	fs.StringVar(&o.MetricsPath, "metrics-path", o.MetricsPath, "The HTTP path where prometheus metrics will be exposed.")
	fs.BoolVar(&o.CrossNamespaceSnapshot, "cross-namespace-snapshot", o.CrossNamespaceSnapshot, "Decide claims whose dataSourceRef is a VolumeSnapshotLink as csi-provisioner sidecars with --cross-namespace-snapshot do (the link must exist; a snapshot in another namespace needs a ReferenceGrant there), rather than as a volume populator's kind. Set it as your sidecars are set.")
	o.FeatureGate.AddFlag(fs)
	logsapi.AddFlags(o.Logging, fs)
}
