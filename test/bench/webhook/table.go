package main

import (
	"fmt"
	"strings"
	"time"
)

// render is the steps as a markdown table.
func render(o options, steps []step) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nSnapshot validation webhook under load: VolumeSnapshotContent creates (dryRun=All), open loop, %s per step, %d workers\n\n", o.duration, o.workers)
	b.WriteString("| target/s | webhook | admitted/s | p50 | p99 | max | errors | dropped | webhook calls | webhook p50 ≤ | webhook p99 ≤ | kube-apiserver's call p99 ≤ |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range steps {
		hook, calls, hp50, hp99, ap99 := "unregistered", fmt.Sprintf("%.0f / %d", s.hook.requests, s.load.sent), "-", "-", "-"
		if s.webhook {
			hook = "registered"
			hp50, hp99 = seconds(s.hook.quantile(0.5)), seconds(s.hook.quantile(0.99))
			ap99 = fmt.Sprintf("%s (%.0f calls)", seconds(s.apiServer.quantile(0.99)), s.apiServer.count)
		}
		fmt.Fprintf(&b, "| %d | %s | %.0f | %s | %s | %s | %d | %d | %s | %s | %s | %s |\n", s.rate, hook, s.load.admitted(),
			ms(s.load.quantile(0.5)), ms(s.load.quantile(0.99)), ms(s.load.quantile(1)), s.load.errors, s.load.dropped, calls, hp50, hp99, ap99)
	}
	for _, s := range steps {
		if s.load.firstError != "" {
			fmt.Fprintf(&b, "\nFirst error at %d/s (webhook registered: %t): %s\n", s.rate, s.webhook, s.load.firstError)
		}
	}
	return b.String()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func seconds(s float64) string { return ms(time.Duration(s * float64(time.Second))) }
