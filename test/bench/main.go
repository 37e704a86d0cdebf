// Command bench measures the sidecar on the local control plane and the
// local CSI driver (package localenv) and prints a table: throughput at the
// default and at a raised client rate limit, latency, API requests per
// claim, CSIStorageCapacity writes and API reads with capacity tracking on
// (next to the upstream csi-provisioner's), and memory, CPU and start-up
// time with thousands of objects in the cluster, at one or more sizes.
// Claims restore across namespaces through spec.dataSourceRef.namespace or
// through a VolumeSnapshotLink, side by side, or have no data source. Run
// it with `make bench`. Nothing here asserts a time: it reports. With
// -upstream=false it measures this sidecar alone and needs no upstream
// binary (make bench-smoke, which does not build it).
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

	"github.com/xns-csi/csi-provisioner/test/cluster"
	"github.com/xns-csi/csi-provisioner/test/localenv"
)

func main() {
	sizes := flag.String("sizes", "100,500,1000", "claim counts of the throughput runs")
	objects := flag.String("objects", "5000", "PVCs, VolumeSnapshots and ReferenceGrants each in the cluster for the memory run: one count, or increasing counts separated by commas, which are filled in turn, each adding to the last (0: no memory run)")
	out := flag.String("out", "", "also write the table to this file")
	setups := flag.String("setups", "default,qps200,upstream,capacity", "sidecar configurations to measure (upstream: the upstream csi-provisioner at its defaults; capacity: this sidecar and upstream's, each with --enable-capacity, writing CSIStorageCapacity objects while claims are provisioned)")
	claims := flag.String("claims", "cross-namespace,link,plain", "kinds of claim to measure: cross-namespace (spec.dataSourceRef.namespace), link (through a VolumeSnapshotLink), plain (no data source)")
	upstreamSizes := flag.String("upstream-sizes", "100", "claim counts of the upstream csi-provisioner's throughput runs (it is much slower)")
	throughputOnly := flag.Bool("throughput-only", false, "skip the latency, API cost and memory measurements")
	memoryOnly := flag.Bool("memory-only", false, "run only the memory measurement")
	keep := flag.Bool("keep", false, "keep each local cluster running after its measurements until interrupted")
	upstream := flag.Bool("upstream", true, "run the upstream csi-provisioner side by side (make bench builds it): its setup, its half of the capacity setup and of the memory measurement; false measures this sidecar alone")
	smoke := flag.Bool("smoke", false, "check that the measurements run (make bench-smoke): 2 claims for each, instead of -sizes and the usual counts, and a memory run of one 3s run per sidecar at 20 and 40 objects of each kind; the figures mean nothing")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, options{sizes: *sizes, upstreamSizes: *upstreamSizes, objects: *objects, out: *out, setups: *setups, claims: *claims,
		throughputOnly: *throughputOnly, memoryOnly: *memoryOnly, keep: *keep, smoke: *smoke, upstream: *upstream}); err != nil {
		fmt.Fprintln(os.Stderr, "bench failed:", err)
		os.Exit(1)
	}
}

// options are the command line.
type options struct {
	sizes, upstreamSizes, out, setups, claims, objects string
	throughputOnly, memoryOnly, keep, smoke, upstream  bool
}

// claimCounts are how many claims the latency, API cost and capacity
// measurements create, and how long the capacity measurement lasts.
type claimCounts struct {
	oneAtATime, later, cost, capacity int
	// capacityWindow is measured from the capacity run's first claim; it
	// spans the provisioning and at least one capacity poll (1m).
	capacityWindow time.Duration
}

var (
	// measureCounts give percentiles and per-claim figures that are stable
	// from run to run.
	measureCounts = claimCounts{oneAtATime: 50, later: 20, cost: 100, capacity: 100, capacityWindow: 2 * time.Minute}
	// smokeCounts only check that each measurement works.
	smokeCounts = claimCounts{oneAtATime: 2, later: 2, cost: 2, capacity: 2, capacityWindow: 5 * time.Second}
	// smokeObjects and smokeMemoryWindow check the memory measurement: two
	// sizes, so that the growth table is made too, one short run each.
	smokeObjects      = []int{20, 40}
	smokeMemoryWindow = 3 * time.Second
)

func run(ctx context.Context, o options) error {
	sizes, err := parseSizes(o.sizes)
	if err != nil {
		return fmt.Errorf("-sizes: %w", err)
	}
	upstreamSizes, err := parseSizes(o.upstreamSizes)
	if err != nil {
		return fmt.Errorf("-upstream-sizes: %w", err)
	}
	objects, err := parseObjects(o.objects)
	if err != nil {
		return fmt.Errorf("-objects: %w", err)
	}
	restores, err := parseRestores(strings.Split(o.claims, ","))
	if err != nil {
		return fmt.Errorf("-claims: %w", err)
	}
	root, err := localenv.RepoRoot()
	if err != nil {
		return err
	}
	work, counts := filepath.Join(root, ".cache", "bench"), measureCounts
	if o.smoke {
		work, counts, sizes, objects = work+"-smoke", smokeCounts, []int{2}, smokeObjects
		memoryWindow, memoryRuns = smokeMemoryWindow, 1
	}
	_ = os.RemoveAll(work)
	r := &results{withoutUpstream: !o.upstream}
	if !o.upstream {
		logf("the upstream csi-provisioner is not measured (-upstream=false): this sidecar alone")
	}
	if !o.memoryOnly {
		err = inCluster(ctx, root, work, o.keep, 0, func(b *bench) error {
			b.setups, b.restores, b.throughputOnly, b.upstreamSizes = strings.Split(o.setups, ","), restores, o.throughputOnly, upstreamSizes
			b.counts, b.withUpstream = counts, o.upstream
			return b.all(r, sizes)
		})
	}
	if err == nil && !o.throughputOnly && objects != nil {
		// On a control plane of its own, so that only its objects are there.
		err = inCluster(ctx, root, filepath.Join(work, "memory"), o.keep, memoryClaimBinderSync, func(b *bench) error {
			b.withUpstream = o.upstream
			return b.memory(r, objects)
		})
	}
	table := r.String()
	fmt.Print(table)
	if o.out != "" {
		if werr := os.WriteFile(o.out, []byte(table), 0o644); werr != nil {
			return werr
		}
	}
	return err
}

// inCluster starts a local cluster with its logs in work, runs measure
// against it and stops it (after an interrupt, with keep). claimBinderSync
// is kube-controller-manager's --pvclaimbinder-sync-period, 0 for the
// harness's default.
func inCluster(ctx context.Context, root, work string, keep bool, claimBinderSync time.Duration, measure func(*bench) error) error {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	logf("starting a local cluster (logs in %s)", work)
	// The shared sidecar serves links too, as a deployment would; without
	// --cross-namespace-snapshot it would leave the link claims' protection
	// finalizer alone.
	env, err := localenv.Start(ctx, localenv.Config{Root: root, Work: work, SidecarArgs: []string{"--cross-namespace-snapshot"},
		ClaimBinderSyncPeriod: claimBinderSync, Progress: func(s string) { logf("  %s", s) }})
	if env != nil {
		defer env.Stop()
	}
	if err != nil {
		return err
	}
	if err := env.InstallCRDs(ctx, "gateway.networking.k8s.io_referencegrants.yaml"); err != nil {
		return err
	}
	if err := env.InstallProjectCRDs(ctx); err != nil { // VolumeSnapshotLink
		return err
	}
	b, err := newBench(ctx, env)
	if err != nil {
		return err
	}
	err = measure(b)
	if keep {
		logf("cluster kept running (KUBECONFIG=%s); interrupt to stop it", env.Cluster.Kubeconfig(cluster.Admin))
		<-ctx.Done()
	}
	return err
}

func parseSizes(list string) ([]int, error) {
	var sizes []int
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// parseObjects reads -objects: increasing counts of objects of each kind,
// or "0" for no memory measurement (nil).
func parseObjects(list string) ([]int, error) {
	sizes, err := parseSizes(list)
	if err != nil {
		return nil, err
	}
	if len(sizes) == 1 && sizes[0] == 0 {
		return nil, nil
	}
	for i, n := range sizes {
		if n <= 0 {
			return nil, fmt.Errorf("%d: each count must be positive (0 alone: no memory measurement)", n)
		}
		if i > 0 && n <= sizes[i-1] {
			return nil, fmt.Errorf("%d after %d: the counts must increase, as the cluster is filled from one to the next", n, sizes[i-1])
		}
	}
	return sizes, nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
