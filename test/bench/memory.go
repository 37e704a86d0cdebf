package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclientset "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/xns-csi/csi-provisioner/test/cluster"
	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// Each sidecar is watched memoryWindow from its start (both sync thousands
// of objects within a few seconds), memoryRuns times per size; the median
// run (by peak RSS) is reported. make bench-smoke shortens both.
var (
	memoryWindow = 20 * time.Second
	memoryRuns   = 5
)

const (
	// memoryClaimBinderSync is how often the memory cluster's PV binder
	// goes through every claim again. The fill's claims wait for ever for
	// a provisioner that is not there, and each pass over them writes an
	// event for each (a claim whose PV is bound costs none): at the
	// harness's 2s, 50,000 of them kept a core of the API server busy
	// through every run, for both sidecars alike. An hour keeps them out
	// of the runs; new claims and PVs are still bound as they come.
	memoryClaimBinderSync = time.Hour
	// memoryNamespaces hold the objects the sidecars start with.
	memoryNamespaces = 50
	// memoryDriver is the driver of the memory measurement's stack, and
	// memoryClass its StorageClass: each run provisions one claim of it.
	memoryDriver = "bench-mem.csi.example.com"
	memoryClass  = "bench-mem"
	// firstClaimNamespace holds the claim of each run.
	firstClaimNamespace = "bench-mem-first"
	// startLimit bounds the wait, from a sidecar's start, for its /readyz
	// and its first PV, and the wait for that PV to be deleted.
	startLimit = 3 * time.Minute
	// startPoll is how often the start-up figures are polled: they are
	// measurements, so the interval bounds their error.
	startPoll = 20 * time.Millisecond
	// healthPoll is more than the interval (100ms) at which starting a
	// sidecar polls its health endpoint, plus a request.
	healthPoll = 250 * time.Millisecond
)

// memoryContender is a sidecar the memory measurement starts.
type memoryContender struct {
	name, binary string
	// upstream is the upstream csi-provisioner: it serves no /readyz and
	// is not profiled.
	upstream bool
	start    func(id string) (*localenv.Sidecar, error)
}

// memory fills the cluster with each number of objects in turn (sizes,
// increasing), adding to what the previous size left, and at each size,
// once the control plane is quiet again, starts this sidecar and the
// upstream csi-provisioner (without b.withUpstream, this sidecar alone) one
// at a time, in turns, memoryRuns times each.
// It adds to r each one's median peak memory, CPU time and start-up times
// per size, and this sidecar's heap profile at each size.
func (b *bench) memory(r *results, sizes []int) error {
	upstream := ""
	if b.withUpstream {
		var err error
		if upstream, err = b.upstreamVersion(); err != nil {
			return err
		}
	}
	fill, err := b.newFillClients()
	if err != nil {
		return err
	}
	// The fill's snapshots name a content that does not exist, which the
	// snapshot-controller retries for as long as it runs: at 50,000 of them
	// a core's worth of API server work that neither sidecar causes, and
	// that a cluster whose snapshots are bound does not have. Neither
	// sidecar needs it to provision a claim without a data source.
	if !b.env.StopProcess("snapshot-controller") {
		return errors.New("no snapshot-controller to stop")
	}
	b.watchPVs()
	stack, err := b.env.StartStack(b.ctx, memoryDriver, nil)
	if err != nil {
		return err
	}
	if err := b.storageClass(memoryClass, memoryDriver, storagev1.VolumeBindingImmediate); err != nil {
		return err
	}
	if err := b.namespace(firstClaimNamespace); err != nil {
		return err
	}
	contenders := []memoryContender{
		{name: "this sidecar", binary: b.env.SidecarBinary(), start: func(id string) (*localenv.Sidecar, error) {
			return b.env.StartSidecar(b.ctx, stack, id, "--v=1", "--enable-pprof")
		}},
	}
	if b.withUpstream {
		contenders = append(contenders, memoryContender{name: "upstream csi-provisioner " + upstream, binary: b.env.UpstreamBinary(), upstream: true,
			start: func(id string) (*localenv.Sidecar, error) {
				return b.env.StartUpstreamSidecar(b.ctx, stack, id, "--v=1")
			}})
	}
	filled := 0
	for _, objects := range sizes {
		if err := b.fillForMemory(fill, filled, objects); err != nil {
			return err
		}
		filled = objects
		rows, err := b.measureMemory(contenders, objects)
		if err != nil {
			return err
		}
		for i, c := range contenders {
			logf("memory: %s, median of %d runs: %s", c.name, memoryRuns, rows[i])
			r.memory = append(r.memory, rows[i])
		}
		profile := b.heapProfilePath(objects)
		if _, err := os.Stat(profile); err == nil {
			r.heapProfiles = append(r.heapProfiles, heapProfile{objects: objects, path: profile, top: pprofTop(b.ctx, profile)})
		}
	}
	return nil
}

// heapProfilePath is where this sidecar's heap profile at objects of each
// kind is saved.
func (b *bench) heapProfilePath(objects int) string {
	return filepath.Join(b.env.Work, fmt.Sprintf("sidecar-heap-%d.pprof", objects))
}

// measureMemory starts each contender memoryRuns times with objects of each
// kind in the cluster, in turns whose first alternates (this sidecar,
// upstream; upstream, this sidecar; ...), each run from a quiet control
// plane, and returns each one's run of median peak RSS, with the medians
// of the start-up times. This sidecar's first run saves its heap profile. A run whose claim
// another process provisioned is repeated, up to memoryRuns times in all.
func (b *bench) measureMemory(contenders []memoryContender, objects int) ([]memoryRow, error) {
	runs := make([][]memoryRow, len(contenders))
	discarded := make([]int, len(contenders))
	for turn := 0; ; turn++ {
		done := true
		for k := range contenders {
			// The first of each turn alternates, so that each starts
			// first after the quiet wait as often as the other.
			i := (k + turn) % len(contenders)
			c := contenders[i]
			if len(runs[i]) == memoryRuns {
				continue
			}
			done = false
			profile := ""
			if !c.upstream && len(runs[i]) == 0 {
				profile = b.heapProfilePath(objects)
			}
			b.waitControlPlaneQuiet()
			row, err := b.memoryRun(c, fmt.Sprintf("mem%d-%d", objects, turn), profile)
			if errors.Is(err, errForeignPV) && discarded[i] < memoryRuns {
				discarded[i]++
				logf("memory: %s run %d discarded: %v", c.name, turn+1, err)
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("memory, %s with %d objects, run %d: %w", c.name, objects, turn+1, err)
			}
			row.sidecar, row.upstream, row.objects = c.name, c.upstream, objects
			logf("memory: %s run %d: %s", c.name, turn+1, row)
			runs[i] = append(runs[i], row)
		}
		if done {
			break
		}
	}
	rows := make([]memoryRow, len(contenders))
	for i := range contenders {
		rows[i] = medianRun(runs[i])
	}
	return rows, nil
}

// medianRun is the run of median peak RSS, with the median of each
// start-up time (each measured on its own).
func medianRun(runs []memoryRow) memoryRow {
	median := func(of func(memoryRow) float64) float64 {
		values := make([]float64, len(runs))
		for i, r := range runs {
			values[i] = of(r)
		}
		slices.Sort(values)
		return values[len(values)/2]
	}
	byPeak := slices.SortedFunc(slices.Values(runs), func(a, b memoryRow) int { return cmp.Compare(a.peakMiB, b.peakMiB) })
	row := byPeak[len(byPeak)/2]
	row.readySeconds = median(func(r memoryRow) float64 { return r.readySeconds })
	row.firstPVSeconds = median(func(r memoryRow) float64 { return r.firstPVSeconds })
	return row
}

// quietCores is the CPU use of etcd and kube-apiserver together under
// which the control plane counts as quiet, and quietWait bounds the wait.
const (
	quietCores = 0.15
	quietWait  = 2 * time.Minute
)

// waitControlPlaneQuiet waits, before each run, until etcd and kube-apiserver
// have finished what the fill or the last run left them (compaction, the
// watch caches, garbage collection), so that no sidecar shares the cores
// with it: it samples their CPU time every second until one
// second's use is under quietCores, for up to quietWait.
func (b *bench) waitControlPlaneQuiet() {
	var pids []int
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if p := b.env.Cluster.Process(name); p != nil {
			pids = append(pids, p.PID())
		}
	}
	used := func() float64 {
		total := 0.0
		for _, pid := range pids {
			if s, err := cpuSeconds(pid); err == nil {
				total += s
			}
		}
		return total
	}
	start, last := time.Now(), used()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-tick.C:
		}
		now := used()
		if now-last < quietCores || time.Since(start) > quietWait {
			logf("memory: control plane at %.2f cores, %s after the fill", now-last, time.Since(start).Round(time.Second))
			return
		}
		last = now
	}
}

// memoryRun creates a claim of the stack's class, starts the contender as
// id and watches it for memoryWindow from its start, saving its heap
// profile then at profile if not empty; then it waits for its /readyz and
// the claim's PV and deletes both, so that each run starts alike.
func (b *bench) memoryRun(c memoryContender, id, profile string) (memoryRow, error) {
	kind := "ours"
	if c.upstream {
		kind = "upstream"
	}
	claim := "first-" + kind + "-" + id
	var pv string
	if err := b.createClaimsTimed(firstClaimNamespace, memoryClass, []string{claim}, nil, func(name string, _ time.Time) { pv = name }); err != nil {
		return memoryRow{}, err
	}
	// Both start with their code out of the page cache, so that they map
	// it alike (see docs/benchmarks.md).
	if err := cluster.EvictFromPageCache(c.binary); err != nil {
		return memoryRow{}, err
	}
	// The process starts within a millisecond of this; everything below is
	// measured from it. The start returns once the sidecar answers its
	// health endpoint (this sidecar's /healthz, upstream's /metrics), which
	// both serve before their informers start: the RSS sampling begins
	// then, and VmHWM, the kernel's peak, misses nothing before it.
	started := time.Now()
	sc, err := c.start(id)
	if err != nil {
		return memoryRow{}, err
	}
	defer sc.Stop(10 * time.Second)
	answering := time.Now()
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	ready := make(chan startTime, 1)
	if !c.upstream {
		// In a goroutine of its own, so that it does not delay the samples.
		go func() { ready <- pollReady(ctx, "http://"+sc.HTTPAddr+"/readyz", started) }()
	}
	row, err := watchMemory(b.ctx, sc.PID(), started.Add(memoryWindow))
	if err != nil {
		return row, err
	}
	if profile != "" {
		if err := saveProfile("http://"+sc.HTTPAddr+"/debug/pprof/heap", profile); err != nil {
			logf("no heap profile: %v", err)
		}
	}
	row.readySeconds = math.NaN()
	if !c.upstream {
		t := <-ready
		if t.err != nil {
			return row, fmt.Errorf("/readyz: %w", t.err)
		}
		row.readySeconds = t.seconds
	}
	seen, err := b.waitSeen(pv, started)
	if err != nil {
		return row, fmt.Errorf("PV %s of claim %s/%s: %w", pv, firstClaimNamespace, claim, err)
	}
	row.firstPVSeconds = seen.Sub(started).Seconds()
	if err := b.deleteClaimAndPV(firstClaimNamespace, claim, pv); err != nil {
		return row, err
	}
	// Both sidecars listen before they list anything, so a PV that
	// existed well before the health endpoint answered was made by some
	// other process (seen once, unexplained): the figure would be a lie.
	if early := answering.Sub(seen); early > healthPoll {
		return row, fmt.Errorf("%w: PV %s of claim %s/%s existed %s before the sidecar answered on its health endpoint",
			errForeignPV, pv, firstClaimNamespace, claim, early.Round(time.Millisecond))
	}
	return row, nil
}

// errForeignPV is a run whose claim was provisioned by another process
// than the sidecar under test.
var errForeignPV = errors.New("provisioned by another process")

// startTime is a start-up figure: seconds from a process's start.
type startTime struct {
	seconds float64
	err     error
}

// pollReady polls url every startPoll until it answers 200 OK and returns
// the seconds from started, for up to startLimit from started.
func pollReady(ctx context.Context, url string, started time.Time) startTime {
	client := &http.Client{Timeout: time.Second}
	ctx, cancel := context.WithDeadline(ctx, started.Add(startLimit))
	defer cancel()
	for {
		if answersOK(ctx, client, url) {
			return startTime{seconds: time.Since(started).Seconds()}
		}
		select {
		case <-ctx.Done():
			return startTime{err: fmt.Errorf("%s did not answer 200 OK within %s of the start: %w", url, startLimit, ctx.Err())}
		case <-time.After(startPoll):
		}
	}
}

// answersOK is true if url answers 200 OK.
func answersOK(ctx context.Context, client *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// waitSeen waits until the bench's PV informer has seen pv, for up to
// startLimit from started, and returns when it saw it.
func (b *bench) waitSeen(pv string, started time.Time) (time.Time, error) {
	ctx, cancel := context.WithDeadline(b.ctx, started.Add(startLimit))
	defer cancel()
	for {
		if at, ok := b.seen.Load(pv); ok {
			return at.(time.Time), nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("not seen within %s of the sidecar's start: %w", startLimit, ctx.Err())
		case <-time.After(startPoll):
		}
	}
}

// deleteClaimAndPV deletes the claim and waits until it and its PV, which
// the sidecar deletes (reclaim policy Delete), are gone.
func (b *bench) deleteClaimAndPV(ns, claim, pv string) error {
	if err := b.client.CoreV1().PersistentVolumeClaims(ns).Delete(b.ctx, claim, metav1.DeleteOptions{}); err != nil {
		return err
	}
	gone := func(err error) (bool, error) {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}
	err := wait.PollUntilContextTimeout(b.ctx, 100*time.Millisecond, startLimit, true, func(ctx context.Context) (bool, error) {
		if _, err := b.client.CoreV1().PersistentVolumes().Get(ctx, pv, metav1.GetOptions{}); err == nil {
			return false, nil
		} else if done, err := gone(err); !done {
			return false, err
		}
		_, err := b.client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
		if err == nil {
			return false, nil
		}
		return gone(err)
	})
	if err != nil {
		return fmt.Errorf("deleting claim %s/%s and its PV %s: %w", ns, claim, pv, err)
	}
	return nil
}

// fillClients create the memory measurement's snapshots and grants
// without the environment clients' rate limit (qps 100).
type fillClients struct {
	snaps   snapclientset.Interface
	gateway gatewayclientset.Interface
}

func (b *bench) newFillClients() (fillClients, error) {
	config, err := b.env.Cluster.RESTConfig(cluster.Admin)
	if err != nil {
		return fillClients{}, err
	}
	config.QPS, config.Burst = 2000, 4000
	var c fillClients
	if c.snaps, err = snapclientset.NewForConfig(config); err != nil {
		return c, err
	}
	c.gateway, err = gatewayclientset.NewForConfig(config)
	return c, err
}

// memoryNamespace is the i-th namespace of the memory measurement's objects.
func memoryNamespace(i int) string { return fmt.Sprintf("bench-mem-%02d", i) }

// perNamespace is how many objects of each kind the i-th of
// memoryNamespaces holds when the cluster holds total: an equal share,
// the first namespaces one more each until the total is exact.
func perNamespace(total, i int) int {
	n := total / memoryNamespaces
	if i < total%memoryNamespaces {
		n++
	}
	return n
}

// fillForMemory adds claims, snapshots and grants over memoryNamespaces
// until the cluster holds to of each kind, from the from that an earlier
// call left (0: none, and no namespaces yet). New objects continue the
// numbering of each namespace. The claims belong to a provisioner that is
// not running, as most claims in a cluster belong to some other driver or
// are bound.
func (b *bench) fillForMemory(c fillClients, from, to int) error {
	class := "bench-other"
	if from == 0 {
		if err := b.storageClass(class, "other.example.com", storagev1.VolumeBindingImmediate); err != nil {
			return err
		}
	}
	for i := range memoryNamespaces {
		ns := memoryNamespace(i)
		if from == 0 {
			if err := b.namespace(ns); err != nil {
				return err
			}
		}
		first, end := perNamespace(from, i), perNamespace(to, i)
		var names []string
		for j := first; j < end; j++ {
			names = append(names, fmt.Sprintf("claim-%04d", j))
		}
		if err := b.createClaims(ns, class, names, namespaced.source("bench-src-default")); err != nil {
			return err
		}
		if err := inParallel(first, end, func(j int) error { return createSnapshotAndGrant(b.ctx, c, ns, j) }); err != nil {
			return err
		}
		if (i+1)%10 == 0 {
			logf("memory: %d/%d namespaces filled up to %d objects of each kind", i+1, memoryNamespaces, to)
		}
	}
	return nil
}

// createSnapshotAndGrant creates the j-th snapshot of ns, of a content
// that does not exist, and the j-th grant, which allows claims of another
// namespace to use that snapshot.
func createSnapshotAndGrant(ctx context.Context, c fillClients, ns string, j int) error {
	content := "absent"
	if _, err := c.snaps.SnapshotV1().VolumeSnapshots(ns).Create(ctx, &snapv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("snap-%04d", j), Namespace: ns},
		Spec:       snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{VolumeSnapshotContentName: &content}}},
		metav1.CreateOptions{}); err != nil {
		return err
	}
	name := gatewayv1.ObjectName(fmt.Sprintf("snap-%04d", j))
	_, err := c.gateway.GatewayV1().ReferenceGrants(ns).Create(ctx, &gatewayv1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("grant-%04d", j), Namespace: ns},
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Kind: "PersistentVolumeClaim", Namespace: "somewhere"}},
			To:   []gatewayv1.ReferenceGrantTo{{Group: "snapshot.storage.k8s.io", Kind: "VolumeSnapshot", Name: &name}},
		}}, metav1.CreateOptions{})
	return err
}

// inParallel calls do for each of first..end-1 with 32 workers and returns
// the errors.
func inParallel(first, end int, do func(j int) error) error {
	work := make(chan int)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for j := range work {
				if err := do(j); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for j := first; j < end; j++ {
		work <- j
	}
	close(work)
	wg.Wait()
	return errors.Join(errs...)
}

// watchMemory samples a process's resident memory every 10ms until
// deadline and returns its peak RSS (the kernel's VmHWM), the peaks of its
// anonymous and file-backed parts, and its CPU time at the deadline.
func watchMemory(ctx context.Context, pid int, deadline time.Time) (memoryRow, error) {
	var row memoryRow
	for time.Now().Before(deadline) {
		status, err := readStatus(pid)
		if err != nil {
			return row, err
		}
		row.anonMiB = max(row.anonMiB, status["RssAnon"])
		row.fileMiB = max(row.fileMiB, status["RssFile"])
		row.peakMiB = status["VmHWM"]
		select {
		case <-ctx.Done():
			return row, ctx.Err()
		case <-time.After(min(10*time.Millisecond, time.Until(deadline))):
		}
	}
	var err error
	row.cpuSeconds, err = cpuSeconds(pid)
	return row, err
}

// pprofTop is the top 15 of a heap profile as go tool pprof -top prints
// it; empty if it fails.
func pprofTop(ctx context.Context, profile string) string {
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=15", profile).Output()
	if err != nil {
		logf("go tool pprof -top %s: %v", profile, err)
		return ""
	}
	return string(out)
}

// readStatus returns the memory figures of /proc/<pid>/status in MiB.
func readStatus(pid int) (map[string]float64, error) {
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(status), "\n") {
		key, value, ok := strings.Cut(line, ":")
		if f := strings.Fields(value); ok && len(f) == 2 && f[1] == "kB" {
			kb, _ := strconv.ParseFloat(f[0], 64)
			out[key] = kb / 1024
		}
	}
	return out, nil
}

// cpuSeconds is a process's user and system CPU time.
func cpuSeconds(pid int) (float64, error) {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(string(stat[strings.LastIndex(string(stat), ")")+2:]))
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100, nil // USER_HZ
}
