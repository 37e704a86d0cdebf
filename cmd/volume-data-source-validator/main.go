// Command volume-data-source-validator is the KEP-1495 validator of
// PersistentVolumeClaim data sources that also understands namespaces and
// ReferenceGrants (KEP-3294): it warns, once per claim and state, when a
// claim names a kind no VolumePopulator registers, or a source in another
// namespace that no ReferenceGrant allows. It takes the upstream
// kubernetes-csi/volume-data-source-validator's flags (validator.ParseFlags).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/xns-csi/csi-provisioner/pkg/validator"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "unknown"

func main() {
	opts, err := validator.ParseFlags(os.Args[1:])
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return
	case err != nil:
		fmt.Fprintln(os.Stderr, "Invalid flags:", err)
		os.Exit(2)
	case opts.ShowVersion:
		fmt.Println(os.Args[0], version)
		return
	}
	if err := opts.ApplyLogging(); err != nil {
		fmt.Fprintln(os.Stderr, "Invalid logging flags:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	klog.FromContext(ctx).Info("Starting "+validator.Component, "version", version)
	if err := validator.Run(ctx, opts); err != nil {
		klog.FromContext(ctx).Error(err, validator.Component+" failed")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	klog.Flush()
}
