package transfer

import (
	"errors"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/xns-csi/csi-provisioner/internal/shared/command"
	"github.com/xns-csi/csi-provisioner/internal/shared/controllerflags"
)

// Component is the controller's name: its events' source, its client's
// user agent, its Lease.
const Component = "storage-transfer-controller"

// Options are the controller's command-line settings, under the names of
// the sidecar's and the validator's flags. See AddFlags.
type Options struct {
	// Common are the flags the project's controllers share.
	controllerflags.Common
	// Retention is how long a completed transfer's request and accept are
	// kept before they are deleted.
	Retention time.Duration
}

// NewOptions returns the defaults, which are the flags' defaults.
func NewOptions() *Options {
	return &Options{Common: controllerflags.New(4), Retention: time.Minute}
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
	o.Common.AddFlags(fs, controllerflags.Help{
		WorkerThreads: "Number of transfers worked on at once.",
		ResyncPeriod:  "Resync interval of the controller; 0 disables resyncs.",
		HTTPEndpoint:  "The TCP network address where the HTTP server for diagnostics, including metrics, /healthz and the leader election health check, will listen (example: `:8080`). The default is empty string, which means the server is disabled.",
	})
	fs.DurationVar(&o.Retention, "retention", o.Retention, "How long the StorageTransferRequest and StorageTransferAccept of a completed transfer are kept before the controller deletes them (an event in both namespaces records the transfer).")
	o.AddGatesAndLogging(fs)
}

// Validate checks the options. It changes nothing; ApplyLogging does.
func (o *Options) Validate() error {
	errs := o.Common.Validate()
	if o.Retention < 0 {
		errs = append(errs, errors.New("--retention must not be negative"))
	}
	return errors.Join(errs...)
}
