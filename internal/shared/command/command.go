// Package command is the main function every binary of this project
// shares: parse the flags, answer --help and --version, configure logging,
// and run the component until SIGTERM or SIGINT.
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	// --logging-format=json, in every binary.
	_ "k8s.io/component-base/logs/json/register"
)

// Options are what Main needs of a component's parsed flags.
type Options interface {
	// VersionRequested reports --version.
	VersionRequested() bool
	// ApplyLogging configures the process-wide logger from the flags.
	ApplyLogging() error
}

// Main parses os.Args with parse and runs run, as a component's main
// function. Invalid flags exit with status 2, a failed run with status 1.
func Main[O Options](component, version string, parse func(args []string) (O, error), run func(context.Context, O) error) {
	opts, err := parse(os.Args[1:])
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return
	case err != nil:
		fmt.Fprintln(os.Stderr, "Invalid flags:", err)
		os.Exit(2)
	case opts.VersionRequested():
		fmt.Println(os.Args[0], version)
		return
	}
	if err := opts.ApplyLogging(); err != nil {
		fmt.Fprintln(os.Stderr, "Invalid logging flags:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	klog.FromContext(ctx).Info("Starting "+component, "version", version)
	if err := run(ctx, opts); err != nil {
		klog.FromContext(ctx).Error(err, component+" failed")
		stop()
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	klog.Flush()
}

// Flags are a component's options as ParseFlags fills them.
type Flags interface {
	Options
	// AddFlags binds every option to a flag of fs.
	AddFlags(fs *pflag.FlagSet)
	// Validate checks the options once parsed.
	Validate() error
}

// ParseFlags parses args (without the program name) into opts, validates
// them unless --version was asked for, and returns them. -h and --help
// print the usage to output and return pflag.ErrHelp; parse and validation
// errors are returned, not printed. Arguments that are no flags are an
// error: in a manifest they are always a mistake (e.g. a value split from
// its flag).
func ParseFlags[O Flags](component string, args []string, output io.Writer, opts O) (O, error) {
	var none O
	fs := pflag.NewFlagSet(component, pflag.ContinueOnError)
	fs.SetOutput(output)
	opts.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return none, err
	}
	if fs.NArg() > 0 {
		return none, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if opts.VersionRequested() {
		return opts, nil
	}
	if err := opts.Validate(); err != nil {
		return none, err
	}
	return opts, nil
}
