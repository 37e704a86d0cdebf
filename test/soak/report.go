package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// sample is the sidecar's memory and goroutines at one moment.
type sample struct {
	when            string
	at              time.Duration // since the churn started
	rssKiB          int
	heapMiB         float64 // the Go heap in use (go_memstats_heap_inuse_bytes)
	goroutines      int
	liveClaims, pvs int
	load            string // the 1-minute load average of the machine
}

// sample reads VmRSS from /proc, go_goroutines and the heap in use from
// /metrics and, with -profiles, saves a heap profile taken after a GC.
func (s *soak) sample(when string, since time.Time) sample {
	s.saveHeapProfile(when)
	out := sample{when: when, at: time.Since(since).Round(time.Second), rssKiB: -1, heapMiB: -1, goroutines: -1,
		liveClaims: s.liveClaims(), pvs: s.pvCount()}
	out.load = loadAverage(1)
	if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.side.PID())); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				out.rssKiB, _ = strconv.Atoi(f[1])
			}
		}
	}
	req, err := http.NewRequestWithContext(s.ctx, http.MethodGet, "http://"+s.side.HTTPAddr+"/metrics", nil)
	if err != nil {
		return out
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		if v, ok := strings.CutPrefix(scanner.Text(), "go_goroutines "); ok {
			out.goroutines, _ = strconv.Atoi(strings.TrimSpace(v))
		}
		if v, ok := strings.CutPrefix(scanner.Text(), "go_memstats_heap_inuse_bytes "); ok {
			if b, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				out.heapMiB = b / (1 << 20)
			}
		}
	}
	logf("sample %s: RSS %d KiB, heap in use %.1f MiB, %d goroutines", when, out.rssKiB, out.heapMiB, out.goroutines)
	return out
}

// saveHeapProfile writes the sidecar's heap profile, taken after a GC, to
// the -profiles directory as heap-<when>.pb.gz; compare two with
// `go tool pprof -base heap-start.pb.gz heap-settled.pb.gz`.
func (s *soak) saveHeapProfile(when string) {
	if s.o.profiles == "" {
		return
	}
	path := filepath.Join(s.o.profiles, "heap-"+strings.ReplaceAll(when, " ", "-")+".pb.gz")
	req, err := http.NewRequestWithContext(s.ctx, http.MethodGet, "http://"+s.side.HTTPAddr+"/debug/pprof/heap?gc=1", nil)
	if err != nil {
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		logf("heap profile %s: %v", when, err)
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err == nil {
		_, err = io.Copy(f, resp.Body)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		logf("heap profile %s: %v", when, err)
	}
}

// results is what the soak reports.
type results struct {
	o                              options
	commit, load                   string
	started                        time.Time
	provisioned                    map[kind]int
	created                        int
	ops                            map[string]int
	apiErrors, grants              int
	settled                        settled
	eventLag                       time.Duration
	unauthorized, deleted          []string
	live                           problems
	left                           []string
	samples                        []sample
	latencies                      []time.Duration
	settledIn, tornDownIn          time.Duration
	snapshotsCreated, snapsDeleted int
	// refused: claims left unprovisioned with their event; lateRestores
	// and deletedWhilePending as in soak.
	lateRestores, deletedWhilePending int
}

// failed reports whether a count that must be zero is not.
func (r *results) failed() bool {
	return len(r.settled.unsettled)+len(r.unauthorized)+len(r.deleted)+len(r.left) > 0 || !r.live.none()
}

// percentile is the p-th percentile of sorted durations, nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func (r *results) String() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("## Soak: %v of churn, seed %d, %.1f operations/s (sidecar %s, load average %s)", r.o.duration, r.o.seed, r.o.rate, r.commit, r.load)
	p("")
	p("| measure | value | must be |")
	p("| --- | --- | --- |")
	total := 0
	var kinds []string
	for _, k := range []kind{plain, restore, xrestore, xother} {
		total += r.provisioned[k]
		kinds = append(kinds, fmt.Sprintf("%s %d", k, r.provisioned[k]))
	}
	p("| claims created | %d | |", r.created)
	p("| claims provisioned | %d (%s) | |", total, strings.Join(kinds, ", "))
	p("| grants created (each deleted but the last) | %d | |", r.grants)
	p("| snapshots created / deleted / deleted with a restore of them pending | %d / %d / %d | |", r.snapshotsCreated, r.snapsDeleted, r.deletedWhilePending)
	p("| restores created naming a snapshot being deleted (must be refused) | %d | |", r.lateRestores)
	p("| claims left unprovisioned that cannot bind (other's, or their snapshot gone) | %d | |", r.settled.refused)
	p("| of them without a ProvisioningFailed event when settled / %v later (waited %v) | %d / %d | |", settleBound,
		r.settled.eventsWait.Round(time.Second), len(r.settled.silent), len(r.settled.stillSilent))
	p("| the sidecar's event lag at the end of the churn (newest event written vs now) | %v | |", r.eventLag.Round(time.Second))
	p("| claims not settled %v after the churn (bound, unable to bind, or gone) | %d | 0 |", settleBound, len(r.settled.unsettled))
	p("| unauthorized cross-namespace provisions (CreateVolume with no grant since the claim's creation) | %d | 0 |", len(r.unauthorized))
	p("| restores of a snapshot deleted before the claim was created | %d | 0 |", len(r.deleted))
	p("| leaked backend volumes (no PV, or several) | %d | 0 |", len(r.live.leaked))
	p("| orphaned PVs (no backend volume, or claim gone) | %d | 0 |", len(r.live.orphaned))
	p("| bound claims without their PV | %d | 0 |", len(r.live.unbound))
	p("| protection finalizers left with no pending restore | %d | 0 |", len(r.live.finalizers))
	p("| objects left %v after deleting every claim, snapshot and grant | %d | 0 |", settleBound, len(r.left))
	p("| grant→PV latency, claims that waited for a grant | n=%d p50 %v p99 %v max %v | |", len(r.latencies),
		percentile(r.latencies, 50).Round(time.Millisecond), percentile(r.latencies, 99).Round(time.Millisecond),
		percentile(r.latencies, 100).Round(time.Millisecond))
	p("| time to settle / to tear down | %v / %v | |", r.settledIn.Round(time.Second), r.tornDownIn.Round(time.Second))
	p("| API errors of the churn | %d | |", r.apiErrors)
	p("")
	p("| sidecar | at | RSS (MiB) | Go heap in use (MiB) | goroutines | live claims | PVs seen | load average |")
	p("| --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, s := range r.samples {
		p("| %s | %v | %.1f | %.1f | %d | %d | %d | %s |", s.when, s.at, float64(s.rssKiB)/1024, s.heapMiB, s.goroutines, s.liveClaims, s.pvs, s.load)
	}
	p("")
	var ops []string
	for name, n := range r.ops {
		ops = append(ops, fmt.Sprintf("%s %d", name, n))
	}
	sort.Strings(ops)
	p("Operations: %s.", strings.Join(ops, ", "))
	for _, l := range []struct {
		what  string
		items []string
	}{{"not settled", r.settled.unsettled}, {"no event when settled", r.settled.silent}, {"no event after waiting", r.settled.stillSilent}, {"unauthorized", r.unauthorized}, {"restored from a deleted snapshot", r.deleted},
		{"leaked", r.live.leaked}, {"orphaned", r.live.orphaned}, {"bound without PV", r.live.unbound},
		{"finalizers left", r.live.finalizers}, {"left after teardown", r.left}} {
		for i, item := range l.items {
			if i == 20 {
				p("- %s: … %d more", l.what, len(l.items)-20)
				break
			}
			p("- %s: %s", l.what, item)
		}
	}
	return b.String()
}

// describe fills in the sidecar's version (the commit it was built from),
// read when the soak starts: make build may replace the binary meanwhile.
func (r *results) describe(ctx context.Context, sidecar string) {
	if out, err := exec.CommandContext(ctx, sidecar, "--version").Output(); err == nil {
		f := strings.Fields(string(out)) // "<path> <version>"
		if len(f) > 0 {
			r.commit = f[len(f)-1]
		}
	}
}

// loadAverage returns the first n figures of /proc/loadavg (1, 5 and 15
// minutes).
func loadAverage(n int) string {
	load, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(load)); err == nil && len(f) >= n {
		return strings.Join(f[:n], " ")
	}
	return "?"
}

// run starts the environment, soaks it and reports.
func run(ctx context.Context, o options) (failed bool, err error) {
	root, work, err := inRepo()
	if err != nil {
		return false, err
	}
	logf("starting a local cluster (logs in %s)", work)
	env, err := localenv.Start(ctx, localenv.Config{Root: root, Work: work, Progress: func(s string) { logf("  %s", s) }})
	if env != nil {
		defer env.Stop()
	}
	if err != nil {
		return false, err
	}
	if err := env.InstallCRDs(ctx, "gateway.networking.k8s.io_referencegrants.yaml"); err != nil {
		return false, err
	}
	s := &soak{ctx: ctx, env: env, o: o, ops: map[string]int{}}
	if err := s.prepare(); err != nil {
		return false, err
	}
	r := &results{o: o, started: time.Now(), provisioned: map[kind]int{}}
	r.describe(ctx, env.SidecarBinary())
	r.samples = append(r.samples, s.sample("start", r.started))
	logf("churning for %v at %.1f operations/s (seed %d)", o.duration, o.rate, o.seed)
	s.churn(r.started.Add(o.duration), func(q int) {
		r.samples = append(r.samples, s.sample([]string{"", "a quarter", "middle", "three quarters"}[q], r.started))
	})
	r.samples = append(r.samples, s.sample("end of churn", r.started))
	r.eventLag = s.eventLag()
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	// A last grant, so that claims of dst waiting for one can settle.
	if !s.grantOn() {
		if err := s.toggleGrant(); err != nil {
			return false, err
		}
	}
	logf("churn stopped; waiting for the claims to settle")
	settling := time.Now()
	r.settled = s.settle()
	r.live = s.reconcile()
	r.settledIn = time.Since(settling)
	r.settled.stillSilent, r.settled.eventsWait = s.awaitEvents()
	r.samples = append(r.samples, s.sample("settled", r.started))
	if r.unauthorized, r.deleted, err = s.authorization(); err != nil {
		return false, err
	}
	r.latencies = s.grantLatencies()
	s.mu.Lock()
	for _, c := range s.claims {
		if c.name == "source" {
			continue
		}
		r.created++
		if _, ok := s.pvSeen[c.volumeName()]; ok {
			r.provisioned[c.kind]++
		}
	}
	for _, sn := range s.snapshots {
		r.snapshotsCreated++
		if !sn.deleted.IsZero() {
			r.snapsDeleted++
		}
	}
	r.ops, r.apiErrors, r.grants = s.ops, s.apiErrors, len(s.grants)
	r.lateRestores, r.deletedWhilePending = s.lateRestores, s.deletedWhilePending
	s.mu.Unlock()
	logf("tearing down: every claim, snapshot and grant deleted")
	tearing := time.Now()
	r.left = s.teardown()
	r.tornDownIn = time.Since(tearing)
	r.samples = append(r.samples, s.sample("torn down", r.started))
	r.load = loadAverage(3)
	table := r.String()
	fmt.Print(table)
	if o.out != "" {
		if err := os.WriteFile(o.out, []byte(table), 0o644); err != nil {
			return false, err
		}
	}
	return r.failed(), nil
}
