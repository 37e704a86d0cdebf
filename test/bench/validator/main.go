// Command validator measures what the volume-data-source-validator costs
// next to the upstream kubernetes-csi volume-data-source-validator (make
// tools builds it, test/tools/validator), on a local control plane holding
// thousands of claims and ReferenceGrants: memory and CPU until each has
// synced and told its claims, the API requests it makes, and how many events
// a claim gets for one state, before and after every claim is updated. The
// two run one after the other, with the same flags, as the same
// ServiceAccount. Run it with `make bench`; nothing here asserts a figure:
// it reports. With -upstream=false it measures this validator alone and
// needs no upstream binary (make bench-smoke, which does not build it).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/xns-csi/csi-provisioner/test/localenv"
)

func main() {
	var o options
	flag.IntVar(&o.claims, "claims", 5000, "PersistentVolumeClaims in the cluster (a mix of data sources, see mix)")
	flag.IntVar(&o.grants, "grants", 5000, "ReferenceGrants in the cluster (at least -namespaces)")
	flag.IntVar(&o.namespaces, "namespaces", 50, "namespaces the claims and grants are spread over (at least 3)")
	flag.IntVar(&o.runs, "runs", 3, "runs of each validator; the median run (by peak RSS) is reported")
	flag.StringVar(&o.out, "out", "", "also write the table to this file")
	flag.BoolVar(&o.upstream, "upstream", true, "run the upstream validator side by side (make bench builds it); false measures this validator alone, e.g. to profile it")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench failed:", err)
		os.Exit(1)
	}
}

// options are the command line.
type options struct {
	claims, grants, namespaces, runs int
	out                              string
	upstream                         bool
}

func (o options) validate() error {
	switch {
	case o.claims < 1 || o.runs < 1:
		return errors.New("-claims and -runs must be positive")
	case o.namespaces < 3:
		return errors.New("-namespaces must be at least 3: a claim's source without a grant is two namespaces away")
	case o.grants < o.namespaces:
		return errors.New("-grants must be at least -namespaces: each namespace grants its neighbor")
	}
	return nil
}

func run(ctx context.Context, o options) error {
	if err := o.validate(); err != nil {
		return err
	}
	root, err := localenv.RepoRoot()
	if err != nil {
		return err
	}
	work := filepath.Join(root, ".cache", "bench-validator")
	_ = os.RemoveAll(work)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	logf("starting a local control plane (logs in %s)", work)
	b, err := start(ctx, root, work)
	if b != nil {
		defer b.env.Stop()
	}
	if err != nil {
		return err
	}
	contenders := []contender{ours(b.env)}
	if o.upstream {
		upstream, err := b.upstreamVersion()
		if err != nil {
			return fmt.Errorf("upstream volume-data-source-validator (make bench builds it; -upstream=false measures without it): %w", err)
		}
		contenders = append(contenders, theirs(b.env, upstream))
	} else {
		logf("the upstream validator is not measured (-upstream=false): this validator alone")
	}
	f, err := b.fill(o.claims, o.grants, o.namespaces)
	if err != nil {
		return err
	}
	runs := make([][]result, len(contenders))
	// Alternately, so that neither has the quieter machine.
	for i := range o.runs {
		for c, who := range contenders {
			r, err := b.measure(who, f, fmt.Sprintf("%s-%d", who.id, i))
			if err != nil {
				return fmt.Errorf("%s, run %d: %w", who.name, i+1, err)
			}
			logf("%s run %d: %s", who.name, i+1, r)
			runs[c] = append(runs[c], r)
		}
	}
	table := report(f, contenders, medians(runs), o.runs)
	fmt.Print(table)
	if o.out != "" {
		return os.WriteFile(o.out, []byte(table), 0o644)
	}
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
