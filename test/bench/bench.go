package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	linkclientset "github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
	"github.com/xns-csi/csi-provisioner/test/cluster"
	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// bench runs the measurements against one environment.
type bench struct {
	ctx    context.Context
	env    *localenv.Env
	client kubernetes.Interface    // a fast client for creating load
	links  linkclientset.Interface // and for VolumeSnapshotLinks
	seen   sync.Map                // PV name -> time the bench saw it
	// setups names the configurations to run and restores the kinds of
	// claim; throughputOnly skips the rest.
	setups         []string
	restores       []restore
	throughputOnly bool
	withUpstream   bool        // runs the upstream csi-provisioner side by side (-upstream)
	upstreamSizes  []int       // claim counts of the upstream sidecar's throughput runs
	counts         claimCounts // claims of the latency, API cost and capacity measurements
	runs           int         // numbers the throughput runs' namespaces
}

// setup is one sidecar configuration under test, with its own driver.
type setup struct {
	name     string
	args     []string
	upstream bool  // the upstream csi-provisioner rather than this sidecar
	sizes    []int // claim counts of its throughput runs
	stack    *localenv.Stack
	sidecar  *localenv.Sidecar
	class    string
	srcNS    string // holds the source volume and snapshot "snap"
}

// newBench returns a bench on env with fast clients for creating load.
func newBench(ctx context.Context, env *localenv.Env) (*bench, error) {
	config, err := env.Cluster.RESTConfig(cluster.Admin)
	if err != nil {
		return nil, err
	}
	config.QPS, config.Burst = 2000, 4000
	b := &bench{ctx: ctx, env: env}
	if b.client, err = kubernetes.NewForConfig(config); err != nil {
		return nil, err
	}
	b.links, err = linkclientset.NewForConfig(config)
	return b, err
}

// all runs every measurement but memory into r.
func (b *bench) all(r *results, sizes []int) error {
	var err error
	b.watchPVs()
	// This sidecar serves both kinds of cross-namespace claim at once, so
	// that their rows compare one sidecar on one control plane.
	known := map[string]setup{
		"default":  {args: []string{"--v=1", "--cross-namespace-snapshot"}},
		"qps200":   {args: []string{"--v=1", "--cross-namespace-snapshot", "--kube-api-qps=200", "--kube-api-burst=400", "--enable-pprof"}},
		"upstream": {args: []string{"--v=1"}, upstream: true}, // its defaults: qps 5, burst 10
	}
	var setups []*setup
	capacity, upstream := false, false
	for _, name := range b.setups {
		if name == "capacity" { // this sidecar and upstream's, measured apart: see capacity
			capacity, upstream = true, b.withUpstream
			continue
		}
		k, ok := known[name]
		if !ok {
			return fmt.Errorf("unknown setup %q", name)
		}
		if k.upstream && !b.withUpstream {
			logf("setup %s left out: -upstream=false", name)
			continue
		}
		sizes := sizes
		if k.upstream {
			sizes, upstream = b.upstreamSizes, true
		}
		setups = append(setups, &setup{name: name, args: k.args, upstream: k.upstream, sizes: sizes})
	}
	if upstream {
		if r.upstream, err = b.upstreamVersion(); err != nil {
			return err
		}
	}
	for _, s := range setups {
		if err := b.prepare(s); err != nil {
			return err
		}
	}
	if !b.throughputOnly {
		// On a quiet cluster first: throughput runs leave kube-controller-
		// manager with a backlog of claims to bind for a while.
		if err := b.latencyAndCost(r, setups); err != nil {
			return err
		}
	}
	if capacity {
		// Before the throughput runs too, and with nothing else going on:
		// its window is fixed.
		if err := b.capacity(r); err != nil {
			return err
		}
	}
	for _, s := range setups {
		for _, kind := range b.restores {
			if kind == viaLink && s.upstream {
				continue // upstream serves no links
			}
			for _, n := range s.sizes {
				row, err := b.throughput(s, kind, n)
				if err != nil {
					return err
				}
				r.throughput = append(r.throughput, row)
				logf("%s", row)
			}
		}
	}
	return nil
}

// upstreamVersion is the release of the upstream csi-provisioner's binary.
func (b *bench) upstreamVersion() (string, error) {
	v, err := b.env.UpstreamVersion(b.ctx)
	if err != nil {
		return "", fmt.Errorf("upstream csi-provisioner (make bench builds it; -upstream=false measures without it): %w", err)
	}
	return v, nil
}

// prepare starts the setup's driver and sidecar and a snapshot to restore.
func (b *bench) prepare(s *setup) error {
	driver := "bench-" + s.name + ".csi.example.com"
	var err error
	if s.stack, err = b.env.StartStack(b.ctx, driver, nil); err != nil {
		return err
	}
	start := b.env.StartSidecar
	if s.upstream {
		start = b.env.StartUpstreamSidecar
	}
	if s.sidecar, err = start(b.ctx, s.stack, s.name, s.args...); err != nil {
		return err
	}
	s.class, s.srcNS = "bench-"+s.name, "bench-src-"+s.name
	if err := b.storageClass(s.class, driver, storagev1.VolumeBindingImmediate); err != nil {
		return err
	}
	if err := b.namespace(s.srcNS); err != nil {
		return err
	}
	if err := b.createClaims(s.srcNS, s.class, []string{"source"}, nil); err != nil {
		return err
	}
	if err := b.waitBound(s.srcNS, "source"); err != nil {
		return err
	}
	return b.snapshot(s.srcNS, "snap", "source", driver)
}

// throughput creates n claims of a kind at once and measures until each
// has a PV.
func (b *bench) throughput(s *setup, kind restore, n int) (throughputRow, error) {
	b.runs++
	ns := fmt.Sprintf("bench-%s-%s-%d-%d", s.name, kind.short(), n, b.runs)
	if err := b.namespace(ns); err != nil {
		return throughputRow{}, err
	}
	if err := b.allow(s, kind, ns); err != nil {
		return throughputRow{}, err
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("claim-%04d", i)
	}
	cpuBefore := b.cpu(s)
	if s.name == "qps200" && kind == namespaced && n >= 1000 {
		// Where the sidecar's CPU goes at the raised limit.
		go func() {
			url := "http://" + s.sidecar.HTTPAddr + "/debug/pprof/profile?seconds=8"
			if err := saveProfile(url, filepath.Join(b.env.Work, "sidecar-cpu.pprof")); err != nil {
				logf("no CPU profile: %v", err)
			}
		}()
	}
	start := time.Now()
	created := map[string]time.Time{}
	var mu sync.Mutex
	if err := b.createClaimsTimed(ns, s.class, names, kind.source(s.srcNS), func(pvName string, at time.Time) {
		mu.Lock()
		created[pvName] = at
		mu.Unlock()
	}); err != nil {
		return throughputRow{}, err
	}
	limit := 15 * time.Minute
	if s.upstream {
		limit = upstreamLimit
	}
	_, err := b.waitPVs(created, limit)
	elapsed := time.Since(start)
	done := b.countSeen(created)
	if err != nil && (!s.upstream || b.ctx.Err() != nil) {
		return throughputRow{}, err
	}
	cpuAfter := b.cpu(s)
	row := throughputRow{setup: s.name, kind: string(kind), n: n, done: done, seconds: elapsed.Seconds(), perSecond: float64(done) / elapsed.Seconds()}
	for i := range cpuProcesses {
		row.cpu = append(row.cpu, 100*(cpuAfter[i]-cpuBefore[i])/elapsed.Seconds())
	}
	row.sidecarCPU = cpuAfter[0] - cpuBefore[0]
	return row, nil
}

// cpuProcesses are the processes whose CPU use a throughput row reports.
var cpuProcesses = []string{"sidecar", "kube-apiserver", "etcd", "kube-controller-manager"}

// cpu returns the CPU seconds used so far by cpuProcesses.
func (b *bench) cpu(s *setup) []float64 {
	pids := []int{s.sidecar.PID()}
	for _, name := range cpuProcesses[1:] {
		pids = append(pids, b.env.Cluster.Process(name).PID())
	}
	out := make([]float64, len(pids))
	for i, pid := range pids {
		if cpu, err := cpuSeconds(pid); err == nil {
			out[i] = cpu
		}
	}
	return out
}

// waitPVs waits until every PV in created was seen and returns the
// creation-to-PV latencies.
func (b *bench) waitPVs(created map[string]time.Time, timeout time.Duration) ([]time.Duration, error) {
	var latencies []time.Duration
	err := wait.PollUntilContextTimeout(b.ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		latencies = latencies[:0]
		for pv, at := range created {
			seen, ok := b.seen.Load(pv)
			if !ok {
				return false, nil
			}
			latencies = append(latencies, seen.(time.Time).Sub(at))
		}
		return true, nil
	})
	slices.Sort(latencies)
	return latencies, err
}

// countSeen is how many of the PVs the bench has seen.
func (b *bench) countSeen(created map[string]time.Time) int {
	n := 0
	for pv := range created {
		if _, ok := b.seen.Load(pv); ok {
			n++
		}
	}
	return n
}

// upstreamLimit bounds an upstream throughput run: its finalizer updates on
// the one shared snapshot conflict, and its retries back off for minutes.
const upstreamLimit = 5 * time.Minute

// watchPVs records when each PV appears.
func (b *bench) watchPVs() {
	factory := informers.NewSharedInformerFactory(b.client, 0)
	inf := factory.Core().V1().PersistentVolumes().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if pv, ok := obj.(*v1.PersistentVolume); ok {
			b.seen.LoadOrStore(pv.Name, time.Now())
		}
	}})
	factory.Start(b.ctx.Done())
	factory.WaitForCacheSync(b.ctx.Done())
}

func (b *bench) createClaims(ns, class string, names []string, source *v1.TypedObjectReference) error {
	return b.createClaimsTimed(ns, class, names, source, func(string, time.Time) {})
}

// createClaimsTimed creates the claims with 32 workers and reports, for
// each, the name of its future PV and when its creation returned.
func (b *bench) createClaimsTimed(ns, class string, names []string, source *v1.TypedObjectReference, done func(pvName string, at time.Time)) error {
	return b.createClaimsWith(ns, names, func(_ int, c *v1.PersistentVolumeClaim) {
		c.Spec.StorageClassName, c.Spec.DataSourceRef = &class, source
	}, done)
}

// createClaimsWith is createClaimsTimed for claims that differ: complete
// gets each claim, of 1Mi, with its index in names, to set its class and
// the rest.
func (b *bench) createClaimsWith(ns string, names []string, complete func(i int, c *v1.PersistentVolumeClaim), done func(pvName string, at time.Time)) error {
	work := make(chan int)
	errs := make(chan error, len(names))
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				claim := &v1.PersistentVolumeClaim{
					ObjectMeta: metav1.ObjectMeta{Name: names[i], Namespace: ns},
					Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
						Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Mi")}}},
				}
				complete(i, claim)
				c, err := b.client.CoreV1().PersistentVolumeClaims(ns).Create(b.ctx, claim, metav1.CreateOptions{})
				if err != nil {
					errs <- err
					continue
				}
				done("pvc-"+string(c.UID), time.Now())
			}
		}()
	}
	for i := range names {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

func (b *bench) waitBound(ns, name string) error {
	return wait.PollUntilContextTimeout(b.ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		c, err := b.client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && c.Status.Phase == v1.ClaimBound, nil
	})
}

func (b *bench) namespace(name string) error {
	_, err := b.client.CoreV1().Namespaces().Create(b.ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	return err
}

func (b *bench) storageClass(name, driver string, binding storagev1.VolumeBindingMode) error {
	_, err := b.client.StorageV1().StorageClasses().Create(b.ctx, &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: driver, VolumeBindingMode: &binding}, metav1.CreateOptions{})
	return err
}

func (b *bench) snapshot(ns, name, claim, driver string) error {
	className := driver + "-snapclass"
	if _, err := b.env.Snaps.SnapshotV1().VolumeSnapshotClasses().Create(b.ctx, &snapv1.VolumeSnapshotClass{
		ObjectMeta: metav1.ObjectMeta{Name: className}, Driver: driver, DeletionPolicy: snapv1.VolumeSnapshotContentDelete}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := b.env.Snaps.SnapshotV1().VolumeSnapshots(ns).Create(b.ctx, &snapv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: &claim},
			VolumeSnapshotClassName: &className}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(b.ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		s, err := b.env.Snaps.SnapshotV1().VolumeSnapshots(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && s.Status != nil && s.Status.ReadyToUse != nil && *s.Status.ReadyToUse, nil
	})
}
