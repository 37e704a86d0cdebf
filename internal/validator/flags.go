package validator

import (
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/xns-csi/csi-provisioner/internal/shared/command"
	"github.com/xns-csi/csi-provisioner/internal/shared/controllerflags"
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
	o.Common.AddFlags(fs, controllerflags.Help{
		WorkerThreads: "Number of worker threads.",
		ResyncPeriod:  "Resync interval of the controller; 0 disables resyncs. Claims are decided again on every change of what they depend on, so a resync only re-checks them (a claim is told each state once).",
		HTTPEndpoint:  "The TCP network address where the HTTP server for diagnostics, including metrics, /healthz, /readyz and the leader election health check, will listen (example: `:8080`). The default is empty string, which means the server is disabled.",
	})
	fs.BoolVar(&o.CrossNamespaceSnapshot, "cross-namespace-snapshot", o.CrossNamespaceSnapshot, "Decide claims whose dataSourceRef is a VolumeSnapshotLink as csi-provisioner sidecars with --cross-namespace-snapshot do (the link must exist; a snapshot in another namespace needs a ReferenceGrant there), rather than as a volume populator's kind. Set it as your sidecars are set.")
	o.AddGatesAndLogging(fs)
}
