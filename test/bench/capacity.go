package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/test/cluster"
	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// capacityArgs are the flags of both sidecars in the capacity setup:
// capacity tracking on, at the default poll interval (1m) and API limits
// (qps 5, burst 10; for capacity objects qps 1, burst 5), and no owner for
// the objects, as no Deployment or Pod runs the sidecars here.
var capacityArgs = []string{"--v=1", "--enable-capacity", "--capacity-ownerref-level=-1"}

// The capacity setup's topology: the driver's storage (capacityBytes) is
// in zone-a, which has two nodes; zone-b and zone-c have one node each and
// no storage of the driver. Each of capacityClasses WaitForFirstConsumer
// classes gets one object per zone.
const (
	capacityBytes   = 10 << 30
	capacityClasses = 2
)

var capacityNodes = []struct{ suffix, zone string }{{"a1", "zone-a"}, {"a2", "zone-a"}, {"b1", "zone-b"}, {"c1", "zone-c"}}

// capacityZones is how many segments capacityNodes span.
func capacityZones() int {
	zones := map[string]bool{}
	for _, n := range capacityNodes {
		zones[n.zone] = true
	}
	return len(zones)
}

// capacityRow is one sidecar's run of the capacity setup.
type capacityRow struct {
	sidecar                   string
	claims, provisioned       int
	provisionSeconds, window  float64 // first claim -> last PV; first claim -> end of the measurement
	created, updated, deleted int     // CSIStorageCapacity events in the window
	getCapacity               float64 // GetCapacity calls in the window, -1 if the sidecar does not say
	requests                  requestDelta
}

// capacity measures both sidecars in the capacity setup (this one alone
// without b.withUpstream), one after the other, each with its own driver,
// nodes and classes.
func (b *bench) capacity(r *results) error {
	sidecars := []bool{false}
	if b.withUpstream {
		sidecars = append(sidecars, true)
	}
	for _, upstream := range sidecars {
		row, err := b.capacityRun(upstream)
		if err != nil {
			return err
		}
		row.sidecar = "this sidecar"
		if upstream {
			row.sidecar = "upstream csi-provisioner " + r.upstream
		}
		logf("%s", row)
		r.capacity = append(r.capacity, row)
	}
	return nil
}

// capacitySidecar is one sidecar of the capacity setup, published and
// ready for claims.
type capacitySidecar struct {
	name    string // "ours" or "upstream", in the names of its objects
	sidecar *localenv.Sidecar
	proxy   *apiProxy
	objects *capacityWatch
	classes []string
}

// stop stops the sidecar and its proxy.
func (c *capacitySidecar) stop() {
	if c.sidecar != nil {
		c.sidecar.Stop(10 * time.Second)
	}
	if c.proxy != nil {
		c.proxy.Close()
	}
}

// startCapacitySidecar starts a driver with its storage in zone-a, the
// nodes and classes, a watch on the driver's CSIStorageCapacity objects,
// and a sidecar with capacityArgs behind an apiProxy, and waits until the
// sidecar has published every object. The returned sidecar, if not nil,
// must be stopped.
func (b *bench) startCapacitySidecar(upstream bool) (*capacitySidecar, error) {
	c, user, start := &capacitySidecar{name: "ours"}, cluster.Sidecar, b.env.StartSidecarWithEnv
	if upstream {
		c.name, user, start = "upstream", cluster.Admin, b.env.StartUpstreamSidecarWithEnv
	}
	driver := "bench-capacity-" + c.name + ".csi.example.com"
	key := "topology." + driver + "/zone"
	stack, err := b.env.StartStack(b.ctx, driver, []string{"--topology=" + key + "=zone-a", "--node-id=" + c.name + "-a1",
		"--capacity-bytes=" + strconv.Itoa(capacityBytes)})
	if err != nil {
		return nil, err
	}
	for _, n := range capacityNodes {
		if err := b.env.CreateNode(b.ctx, c.name+"-"+n.suffix, driver, map[string]string{key: n.zone}); err != nil {
			return nil, err
		}
	}
	for i := range capacityClasses {
		class := fmt.Sprintf("bench-capacity-%s-%d", c.name, i)
		if err := b.storageClass(class, driver, storagev1.VolumeBindingWaitForFirstConsumer); err != nil {
			return nil, err
		}
		c.classes = append(c.classes, class)
	}
	if c.objects, err = b.watchCapacities(driver); err != nil {
		return nil, err
	}
	if c.proxy, err = startAPIProxy(b.ctx, b.env.Cluster.Server()); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(b.env.Work, "capacity-"+c.name+".kubeconfig")
	if err := c.proxy.writeKubeconfig(b.env.Cluster.Kubeconfig(user), kubeconfig); err != nil {
		return c, err
	}
	// The later --kubeconfig wins over the one localenv gives.
	c.sidecar, err = start(b.ctx, stack, "capacity", []string{"NAMESPACE=" + localenv.CapacityNamespace},
		append(capacityArgs, "--kubeconfig="+kubeconfig)...)
	if err != nil {
		return c, err
	}
	if err := c.objects.waitPublished(b.ctx, capacityClasses*capacityZones(), key); err != nil {
		return c, fmt.Errorf("%s sidecar: %w", c.name, err)
	}
	return c, nil
}

// capacityRun starts a sidecar (startCapacitySidecar), then creates the
// claims at once and measures from the first claim for the capacity
// window, or until every claim has its PV if that takes longer: the
// CSIStorageCapacity objects it writes, seen through a watch, its API
// requests, counted by an apiProxy, and its GetCapacity calls.
func (b *bench) capacityRun(upstream bool) (capacityRow, error) {
	c, err := b.startCapacitySidecar(upstream)
	if c != nil {
		defer c.stop()
	}
	if err != nil {
		return capacityRow{}, err
	}
	ns := "bench-capacity-" + c.name
	if err := b.namespace(ns); err != nil {
		return capacityRow{}, err
	}
	names := make([]string, b.counts.capacity)
	for i := range names {
		names[i] = fmt.Sprintf("claim-%04d", i)
	}
	before, addr := c.proxy.snapshot(), c.sidecar.HTTPAddr
	getCapacityBefore, getCapacityErr := getCapacityCalls(addr)
	restBefore, _ := requests(addr)
	created := map[string]time.Time{}
	var mu sync.Mutex
	began := time.Now()
	err = b.createClaimsWith(ns, names, func(i int, claim *v1.PersistentVolumeClaim) {
		// Alternately in each class and on each node of zone-a, as the
		// scheduler would choose for pods that fit there.
		claim.Spec.StorageClassName = &c.classes[i%len(c.classes)]
		claim.Annotations = map[string]string{localenv.SelectedNodeAnnotation: c.name + "-" + capacityNodes[i/len(c.classes)%2].suffix}
	}, func(pv string, at time.Time) {
		mu.Lock()
		created[pv] = at
		mu.Unlock()
	})
	if err != nil {
		return capacityRow{}, err
	}
	_, err = b.waitPVs(created, 10*time.Minute)
	row := capacityRow{claims: len(names), provisioned: b.countSeen(created), provisionSeconds: time.Since(began).Seconds()}
	if err != nil {
		return capacityRow{}, fmt.Errorf("%s sidecar: %d of %d claims provisioned: %w", c.name, row.provisioned, row.claims, err)
	}
	if rest := b.counts.capacityWindow - time.Since(began); rest > 0 {
		// The measurement window itself, not a wait for something.
		select {
		case <-b.ctx.Done():
			return capacityRow{}, b.ctx.Err()
		case <-time.After(rest):
		}
	}
	ended := time.Now()
	row.window = ended.Sub(began).Seconds()
	row.requests = deltaOf(before, c.proxy.snapshot())
	row.created, row.updated, row.deleted = c.objects.between(began, ended)
	row.getCapacity = -1
	if getCapacityAfter, err := getCapacityCalls(addr); err == nil && getCapacityErr == nil && getCapacityBefore >= 0 {
		row.getCapacity = getCapacityAfter - getCapacityBefore
	}
	if restAfter, err := requests(addr); err == nil && len(restAfter) > 0 {
		// A check of the proxy's count with the sidecar's own.
		logf("%s sidecar: rest_client_requests_total in the window: GET %.0f, POST %.0f, PUT %.0f, PATCH %.0f, DELETE %.0f", c.name,
			restAfter["GET"]-restBefore["GET"], restAfter["POST"]-restBefore["POST"], restAfter["PUT"]-restBefore["PUT"],
			restAfter["PATCH"]-restBefore["PATCH"], restAfter["DELETE"]-restBefore["DELETE"])
	}
	logf("%s sidecar: reads in the window: %s", c.name, row.requests.readsByResource())
	return row, nil
}

// capacityWatch records the CSIStorageCapacity events of one driver.
type capacityWatch struct {
	lister storagelisters.CSIStorageCapacityLister
	mu     sync.Mutex
	events []capacityEvent
}

// capacityEvent is one write of a CSIStorageCapacity object, as a watch
// sees it.
type capacityEvent struct {
	at   time.Time
	kind string // "created", "updated" or "deleted"
}

// watchCapacities starts watching the driver's CSIStorageCapacity objects.
// An update counts only if the object's resourceVersion changed, so that
// resyncs and relists do not count.
func (b *bench) watchCapacities(driver string) (*capacityWatch, error) {
	factory := informers.NewSharedInformerFactoryWithOptions(b.client, 0, informers.WithNamespace(localenv.CapacityNamespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.Set{"csi.storage.k8s.io/drivername": driver}.String()
		}))
	informer := factory.Storage().V1().CSIStorageCapacities()
	w := &capacityWatch{lister: informer.Lister()}
	record := func(kind string) {
		w.mu.Lock()
		w.events = append(w.events, capacityEvent{at: time.Now(), kind: kind})
		w.mu.Unlock()
	}
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { record("created") },
		UpdateFunc: func(old, cur any) {
			if old.(*storagev1.CSIStorageCapacity).ResourceVersion != cur.(*storagev1.CSIStorageCapacity).ResourceVersion {
				record("updated")
			}
		},
		DeleteFunc: func(any) { record("deleted") },
	}); err != nil {
		return nil, err
	}
	factory.Start(b.ctx.Done())
	factory.WaitForCacheSync(b.ctx.Done())
	return w, nil
}

// waitPublished waits until there are n objects, each with a capacity, of
// which those for zone-a report the whole storage: the sidecar has
// published every class and segment once.
func (w *capacityWatch) waitPublished(ctx context.Context, n int, key string) error {
	full := resource.NewQuantity(capacityBytes, resource.BinarySI)
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		objects, err := w.lister.List(labels.Everything())
		if err != nil || len(objects) != n {
			return false, err
		}
		for _, o := range objects {
			if o.Capacity == nil || o.NodeTopology == nil {
				return false, nil
			}
			if o.NodeTopology.MatchLabels[key] == "zone-a" && o.Capacity.Cmp(*full) != 0 {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d CSIStorageCapacity objects: %w", n, err)
	}
	return nil
}

// between counts the events from start to end by kind.
func (w *capacityWatch) between(start, end time.Time) (created, updated, deleted int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.events {
		if e.at.Before(start) || e.at.After(end) {
			continue
		}
		switch e.kind {
		case "created":
			created++
		case "updated":
			updated++
		case "deleted":
			deleted++
		}
	}
	return created, updated, deleted
}

// getCapacityCalls is the number of GetCapacity calls a sidecar made, from
// the CSI call metrics that both sidecars export.
func getCapacityCalls(addr string) (float64, error) {
	calls, err := scrape(addr, "csi_sidecar_operations_seconds_count", "method_name")
	if err != nil {
		return 0, err
	}
	if n, ok := calls["/csi.v1.Controller/GetCapacity"]; ok {
		return n, nil
	}
	return -1, nil
}
