// Command transfer measures issue 15's speed point for the
// storage-transfer-controller on the local control plane (package
// localenv: the real snapshot-controller, csi-snapshotter, local CSI driver
// and our sidecar): the time from a StorageTransferAccept's creation to its
// request's phase Completed, for one snapshot transfer, one claim transfer
// (no pod) and N snapshot transfers at once, and prints a markdown table.
// Run it with `make bench`. Nothing here asserts a time: it reports; it
// fails only when a transfer does not complete, fails or conflicts.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/xns-csi/csi-provisioner/test/localenv"
)

func main() {
	concurrent := flag.String("concurrent", "10,25,50", "how many snapshot transfers to start at once, one run for each number")
	singles := flag.Int("singles", 3, "how many single snapshot and claim transfers to time, one after the other")
	snapshotQPS := flag.Int("snapshot-qps", 200, "the snapshot-controller's and csi-snapshotter's --kube-api-qps (burst twice that); 0 leaves their defaults, 5 and burst 10")
	out := flag.String("out", "", "also write the table to this file")
	smoke := flag.Bool("smoke", false, "check that the measurement runs (make bench-smoke): one single transfer of each kind; the figures mean nothing")
	flag.Parse()
	if *snapshotQPS > 0 {
		snapshotArgs = []string{fmt.Sprintf("--kube-api-qps=%d", *snapshotQPS), fmt.Sprintf("--kube-api-burst=%d", 2**snapshotQPS)}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *concurrent, *singles, *out, *smoke); err != nil {
		fmt.Fprintln(os.Stderr, "bench failed:", err)
		os.Exit(1)
	}
}

// The client limits the bench sets: the snapshot-controller's and the
// csi-snapshotter's (snapshotArgs, from -snapshot-qps; none: their
// defaults) and the storage-transfer-controller's, as the e2e suite's
// "fast" one. kube-controller-manager's is 200/400 (package cluster).
var (
	snapshotArgs []string
	transferArgs = []string{"--kube-api-qps=200", "--kube-api-burst=400", "--worker-threads=10", "--v=2"}
)

func run(ctx context.Context, concurrent string, singles int, out string, smoke bool) error {
	sizes, err := parseSizes(concurrent)
	if err != nil {
		return fmt.Errorf("-concurrent: %w", err)
	}
	if smoke {
		singles = 1
	}
	root, err := localenv.RepoRoot()
	if err != nil {
		return err
	}
	work := filepath.Join(root, ".cache", "bench-transfer")
	if smoke {
		work += "-smoke"
	}
	_ = os.RemoveAll(work)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	logf("starting a local cluster (logs in %s)", work)
	env, err := localenv.Start(ctx, localenv.Config{Root: root, Work: work,
		SnapshotControllerArgs: snapshotArgs, SnapshotterArgs: snapshotArgs,
		Progress: func(s string) { logf("  %s", s) }})
	if env != nil {
		defer env.Stop()
	}
	if err != nil {
		return err
	}
	logf("  storage-transfer-controller %s", strings.Join(transferArgs, " "))
	if _, err := env.StartTransferController(ctx, "storage-transfer-controller", transferArgs...); err != nil {
		return err
	}
	b, err := newBench(ctx, env)
	if err != nil {
		return err
	}
	r := report{started: loadAverage()}
	for i := range singles {
		if err := r.add(b.snapshots(ctx, fmt.Sprintf("one-%d", i), 1)); err != nil {
			return err
		}
	}
	for i := range singles {
		if err := r.add(b.claim(ctx, fmt.Sprintf("claim-%d", i))); err != nil {
			return err
		}
	}
	for _, n := range sizes {
		if err := r.add(b.snapshots(ctx, fmt.Sprintf("at-once-%d", n), n)); err != nil {
			return err
		}
	}
	r.ended = loadAverage()
	table := r.String()
	fmt.Print(table)
	if out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			return err
		}
	}
	if n := r.conflicts(); n > 0 {
		return fmt.Errorf("%d transfers met a conflict", n)
	}
	return nil
}

func parseSizes(list string) ([]int, error) {
	var sizes []int
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", s)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// loadAverage is the machine's 1-minute load average, from /proc/loadavg.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(data))[0]
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
