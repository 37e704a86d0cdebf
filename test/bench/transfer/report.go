package main

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// row is one run: how many transfers of a kind were started at once, and
// the time from each accept's creation to Completed, sorted.
type row struct {
	kind      string
	latencies []time.Duration
	// warnings are the reasons and objects of the Warning events in the
	// run's two namespaces (refusals, rollbacks, failed steps).
	warnings []string
	// conflicts are the requests that had a conflict condition.
	conflicts int
}

// report is every run and the machine's load average before and after.
type report struct {
	rows           []row
	started, ended string
}

func (r *report) add(x row, err error) error {
	if err != nil {
		return err
	}
	logf("  %s", x)
	r.rows = append(r.rows, x)
	return nil
}

func (x row) String() string {
	warnings := strconv.Itoa(len(x.warnings))
	if len(x.warnings) > 0 {
		warnings += " (" + strings.Join(x.warnings, ", ") + ")"
	}
	return fmt.Sprintf("| %s | %d | %d | %d | %s | %s | %s | %s |", x.kind, len(x.latencies), len(x.latencies), x.conflicts, warnings,
		pct(x.latencies, 50), pct(x.latencies, 99), pct(x.latencies, 100))
}

// pct is the p-th percentile (nearest rank) of sorted durations.
func pct(sorted []time.Duration, p int) string {
	i := (len(sorted)*p + 99) / 100
	return fmt.Sprintf("%.2f s", sorted[max(i, 1)-1].Seconds())
}

// conflicts is how many transfers of all runs met a conflict.
func (r *report) conflicts() int {
	n := 0
	for _, x := range r.rows {
		n += x.conflicts
	}
	return n
}

func (r *report) String() string {
	var b strings.Builder
	b.WriteString("## Namespace transfer: accept created -> request Completed\n\n")
	b.WriteString("| source | at once | completed | conflicts | warning events | p50 | p99 | max |\n|---|---|---|---|---|---|---|---|\n")
	for _, x := range r.rows {
		fmt.Fprintln(&b, x)
	}
	commit, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	fmt.Fprintf(&b, "\nSingle transfers one after the other; \"at once\" = that many snapshot transfers of one claim's snapshots, all accepts created together. "+
		"A conflict is a request Failed or with a condition %s at any time (the bench fails if there is one); each target snapshot was checked to name its own source's backend snapshot, each target claim the source's volume. "+
		"snapshot-controller and csi-snapshotter %s, kube-controller-manager --kube-api-qps=200 --kube-api-burst=400, storage-transfer-controller %s. "+
		"Load average (1 min) %s at the start, %s at the end; commit %s.\n",
		strings.Join(conflictReasons, ", "), limits(snapshotArgs),
		strings.Join(transferArgs, " "), r.started, r.ended, strings.TrimSpace(string(commit)))
	return b.String()
}

func limits(args []string) string {
	if len(args) == 0 {
		return "at their defaults (--kube-api-qps=5 --kube-api-burst=10)"
	}
	return strings.Join(args, " ")
}
