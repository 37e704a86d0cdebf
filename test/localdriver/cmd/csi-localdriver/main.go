// Command csi-localdriver serves a CSI driver that keeps volumes and
// snapshots as directories on local disk, for end-to-end tests and demos of
// the provisioner. See package localdriver for what it does and does not
// do.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/xns-csi/csi-provisioner/test/localdriver"
)

func main() {
	hostname, _ := os.Hostname() // an empty default fails Validate below
	cfg := localdriver.Config{}
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	fs.StringVar(&cfg.Endpoint, "endpoint", "unix:///csi/csi.sock", "CSI endpoint: a unix socket path or a unix:// URL")
	fs.StringVar(&cfg.StateDir, "state-dir", "", "directory for volumes, snapshots and their metadata (required)")
	fs.StringVar(&cfg.Name, "name", localdriver.DefaultName, "CSI driver name")
	fs.StringVar(&cfg.NodeID, "node-id", hostname, "node ID that NodeGetInfo reports")
	fs.DurationVar(&cfg.RestoreDelay, "restore-delay", 0, "wait this long in every CreateVolume with a content source (tests)")
	fs.StringVar(&cfg.FaultsFile, "faults-file", "", "JSON fault rules (localdriver.Faults), re-read on every call: injected gRPC codes and delays per method, before or after the call runs (tests)")
	fs.StringVar(&cfg.CallLog, "call-log", "", "file to append a JSON line to when each call starts and ends (tests)")
	fs.Int64Var(&cfg.CapacityBytes, "capacity-bytes", localdriver.DefaultCapacityPoolBytes, "size of the storage pool that GetCapacity reports from")
	fs.Func("topology", "topology segment of the storage, key=value[,key=value...]; none by default", func(s string) error {
		topology, err := localdriver.ParseTopology(s)
		cfg.Topology = topology
		return err
	})
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	fs.Var(klogFlags.Lookup("v").Value, "v", "log verbosity")
	_ = fs.Parse(os.Args[1:]) // ExitOnError: never returns an error

	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "Invalid flags:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := localdriver.Run(ctx, cfg); err != nil {
		klog.FromContext(ctx).Error(err, "csi-localdriver failed")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	klog.Flush()
}
