// Command soak runs the sidecar for a bounded time on the local control
// plane (package localenv) under a steady, seeded mix of claim creation and
// deletion, ReferenceGrant churn and VolumeSnapshot creation and deletion,
// then stops the churn, lets everything settle, reconciles the local
// driver's state directory with the cluster and reports: claims
// provisioned, unauthorized cross-namespace provisions, leaked and orphaned
// volumes, source-protection finalizers left, the sidecar's RSS and
// goroutines over time, and the grant→PV latency of claims that waited for
// a grant. It exits non-zero when a count that must be zero is not. Run it
// with `make soak` or `go run ./test/soak -duration 3m`; docs/reliability.md
// has the figures of a run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	var o options
	flag.DurationVar(&o.duration, "duration", 10*time.Minute, "how long the churn runs (setup, settling and teardown come on top)")
	flag.StringVar(&o.out, "out", "", "also write the table to this file")
	flag.Uint64Var(&o.seed, "seed", 14, "seed of the churn: the same seed gives the same sequence of operations")
	flag.Float64Var(&o.rate, "rate", 3, "operations per second")
	flag.IntVar(&o.maxClaims, "max-claims", 60, "live claims at most: above it a creation becomes a deletion")
	flag.StringVar(&o.profiles, "profiles", "", "save the sidecar's heap profile at each sample into this directory (heap-<sample>.pb.gz)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	failed, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak failed:", err)
		os.Exit(1)
	}
	if failed {
		fmt.Fprintln(os.Stderr, "soak: a count that must be zero is not (see the table)")
		os.Exit(1)
	}
}

// options are the command line.
type options struct {
	duration  time.Duration
	out       string
	seed      uint64
	rate      float64
	maxClaims int
	profiles  string
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
