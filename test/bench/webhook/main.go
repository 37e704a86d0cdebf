// Command webhook measures the snapshot validation webhook under load
// (issue 13): an open-loop client-go load generator creates
// VolumeSnapshotContents (dry run) through a local kube-apiserver at each
// rate, first with the webhook unregistered, then registered with
// failurePolicy Fail, and prints achieved admissions/s, client latency,
// errors and what the webhook's own metrics counted, as a markdown table.
//
//	go run ./test/bench/webhook [-rates 200,1000] [-duration 20s] [-out file] [-smoke]
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
)

type options struct {
	rates    []int
	duration time.Duration
	workers  int
	out      string
	work     string
	// webhookArgs are more arguments of the webhook, e.g. --enable-http2.
	webhookArgs []string
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	var o options
	rates := flag.String("rates", "200,1000", "comma-separated target admissions per second, one step each")
	flag.DurationVar(&o.duration, "duration", 20*time.Second, "length of each step")
	flag.IntVar(&o.workers, "workers", 256, "most requests in flight at once")
	flag.StringVar(&o.out, "out", "", "also write the table to this file")
	flag.StringVar(&o.work, "work", "", "directory for the cluster's state and logs (default: a temporary one)")
	smoke := flag.Bool("smoke", false, "a quick check: 2s at 20/s")
	webhookArgs := flag.String("webhook-args", "", "more arguments of the webhook, space-separated (e.g. --enable-http2)")
	flag.Parse()
	o.webhookArgs = strings.Fields(*webhookArgs)
	if *smoke {
		*rates, o.duration = "20", 2*time.Second
	}
	for _, s := range strings.Split(*rates, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("-rates: %q is not a positive number", s)
		}
		o.rates = append(o.rates, n)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if o.work == "" {
		dir, err := os.MkdirTemp("", "bench-webhook-")
		if err != nil {
			return err
		}
		o.work = dir
	}
	o.work, _ = filepath.Abs(o.work)
	steps, err := measure(ctx, o)
	table := render(o, steps)
	fmt.Print(table)
	if o.out != "" && len(steps) > 0 {
		if werr := os.WriteFile(o.out, []byte(table), 0o644); werr != nil {
			return werr
		}
	}
	return err
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
