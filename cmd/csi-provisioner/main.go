// Command csi-provisioner is a CSI external-provisioner sidecar that also
// provisions volumes from VolumeSnapshots in other namespaces when a
// ReferenceGrant allows it (KEP-3294). It takes the upstream
// csi-provisioner's flags (sidecar.ParseFlags).
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

	"github.com/xns-csi/csi-provisioner/pkg/sidecar"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "unknown"

func main() {
	opts, err := sidecar.ParseFlags(os.Args[1:])
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
	klog.FromContext(ctx).Info("Starting csi-provisioner", "version", version)
	if err := sidecar.Run(ctx, opts); err != nil {
		klog.FromContext(ctx).Error(err, "csi-provisioner failed")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	klog.Flush()
}
