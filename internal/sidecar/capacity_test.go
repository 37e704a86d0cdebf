package sidecar

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/xns-csi/csi-provisioner/internal/sidecar/capacity"
	"github.com/xns-csi/csi-provisioner/test/csitest"
)

// The capacity tests run the sidecar with --enable-capacity: the
// CSIStorageCapacity objects it writes to the fake API, and the GetCapacity
// calls its driver gets.

const (
	capacityNamespace = "csi-system"
	zoneKey           = "topology.example.com/zone"
	lateClass         = "late"
	gib               = int64(1) << 30
)

// withCapacity sets --enable-capacity with NAMESPACE=csi-system, no owner,
// a poll interval of an hour (so only a refresh asks the driver again
// within a test) and the sidecar's registry for the metrics; the driver
// advertises GET_CAPACITY and answers with the given capacities. Created
// objects get a name and UID, as the API server gives them.
func withCapacity(driver *capacities, change ...func(*CapacityOptions)) envOption {
	return func(c *envConfig) {
		c.driverOpts = append(c.driverOpts, csitest.WithCapabilities(csispec.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
			csispec.ControllerServiceCapability_RPC_GET_CAPACITY))
		c.beforeStart = append(c.beforeStart, func(e *env) {
			e.driver.SetGetCapacityHook(driver.answer)
			e.kube.PrependReactor("create", "csistoragecapacities", nameGenerated())
		})
		c.configure = append(c.configure, func(e *env, opts *Options, bc *buildConfig) {
			opts.Capacity = CapacityOptions{Enabled: true, PollInterval: time.Hour, OwnerRefLevel: -1, Threads: 2,
				KubeAPIQPS: 1, KubeAPIBurst: 5, Namespace: capacityNamespace}
			for _, f := range change {
				f(&opts.Capacity)
			}
			bc.capacityKube, bc.registerer = e.kube, e.registry
		})
	}
}

// nameGenerated gives a created object with generateName a name and every
// created object a UID, as the API server does and the fake does not.
func nameGenerated() k8stesting.ReactionFunc {
	var n atomic.Int64
	return func(action k8stesting.Action) (bool, runtime.Object, error) {
		obj := action.(k8stesting.CreateAction).GetObject().(metav1.Object)
		if obj.GetName() == "" {
			obj.SetName(obj.GetGenerateName() + strconv.FormatInt(n.Add(1), 10))
		}
		obj.SetUID(types.UID("uid-" + obj.GetName()))
		return false, nil, nil // the tracker stores it
	}
}

// capacities is the driver's storage: what GetCapacity reports per zone
// (the whole pool without a zone). Tests change it while the sidecar runs.
type capacities struct {
	mu     sync.Mutex
	byZone map[string]int64
}

func newCapacities(byZone map[string]int64) *capacities {
	return &capacities{byZone: maps.Clone(byZone)}
}

func (c *capacities) set(zone string, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byZone[zone] = bytes
}

func (c *capacities) answer(_ context.Context, req *csispec.GetCapacityRequest) (*csispec.GetCapacityResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &csispec.GetCapacityResponse{AvailableCapacity: c.byZone[req.GetAccessibleTopology().GetSegments()[zoneKey]]}, nil
}

// createNode creates a Node in zone and its CSINode, which lists the driver
// with the zone as its topology key, as kubelet does.
func (e *env) createNode(name, zone string) {
	e.t.Helper()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{zoneKey: zone}}}
	if _, err := e.kube.CoreV1().Nodes().Create(e.ctx, node, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	csiNode := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.CSINodeSpec{
		Drivers: []storagev1.CSINodeDriver{{Name: driverName, NodeID: name, TopologyKeys: []string{zoneKey}}}}}
	if _, err := e.kube.StorageV1().CSINodes().Create(e.ctx, csiNode, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// createClassWithBinding creates a class of the driver with a binding mode.
func (e *env) createClassWithBinding(name string, mode storagev1.VolumeBindingMode) {
	e.t.Helper()
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: driverName, VolumeBindingMode: &mode}
	if _, err := e.kube.StorageV1().StorageClasses().Create(e.ctx, class, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// capacityObjects returns the CSIStorageCapacity objects of a class, by the
// zone of their nodeTopology ("" for the empty segment).
func (e *env) capacityObjects(class string) map[string]storagev1.CSIStorageCapacity {
	e.t.Helper()
	list, err := e.kube.StorageV1().CSIStorageCapacities(capacityNamespace).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]storagev1.CSIStorageCapacity{}
	for _, c := range list.Items {
		if c.StorageClassName == class {
			out[c.NodeTopology.MatchLabels[zoneKey]] = c
		}
	}
	return out
}

// waitForCapacity waits until the class's object in zone reports bytes.
func (e *env) waitForCapacity(class, zone string, bytes int64) storagev1.CSIStorageCapacity {
	e.t.Helper()
	var found storagev1.CSIStorageCapacity
	e.waitFor("capacity "+resource.NewQuantity(bytes, resource.BinarySI).String()+" of class "+class+" in zone "+zone, func() bool {
		obj, ok := e.capacityObjects(class)[zone]
		found = obj
		return ok && obj.Capacity != nil && obj.Capacity.Value() == bytes
	})
	return found
}

// gauge returns the value of a gauge without labels in the sidecar's
// registry, -1 when absent.
func (e *env) gauge(name string) float64 {
	e.t.Helper()
	families, err := e.registry.Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}

func TestCapacityIsPublishedPerLateBindingClassAndZone(t *testing.T) {
	driver := newCapacities(map[string]int64{"a": 10 * gib, "b": 20 * gib})
	e := startEnv(t, withCapacity(driver), beforeStart(func(e *env) {
		e.createNode("node-a", "a")
		e.createNode("node-b", "b")
		e.createClassWithBinding(lateClass, storagev1.VolumeBindingWaitForFirstConsumer)
		e.createClassWithBinding("now", storagev1.VolumeBindingImmediate)
	}))

	a := e.waitForCapacity(lateClass, "a", 10*gib)
	e.waitForCapacity(lateClass, "b", 20*gib)
	wantLabels := map[string]string{capacity.DriverNameLabel: driverName, capacity.ManagedByLabel: capacity.DefaultManagedBy}
	if !maps.Equal(a.Labels, wantLabels) || len(a.OwnerReferences) != 0 {
		t.Errorf("labels %v and owners %v, want %v and none", a.Labels, a.OwnerReferences, wantLabels)
	}
	if got := e.capacityObjects("now"); len(got) != 0 {
		t.Errorf("the immediately binding class got capacity objects in zones %v, want none", slices.Collect(maps.Keys(got)))
	}
	// Two zones of two classes: "late", and the harness's class, which
	// names no binding mode (the API server would default it to
	// Immediate; the fake does not, and no mode counts as late binding).
	if got := e.gauge("csistoragecapacities_desired_goal"); got != 4 {
		t.Errorf("csistoragecapacities_desired_goal = %v, want 4", got)
	}
}

func TestCapacityIsPolledForChanges(t *testing.T) {
	driver := newCapacities(map[string]int64{"a": 10 * gib})
	e := startEnv(t, withCapacity(driver, func(o *CapacityOptions) { o.PollInterval = 50 * time.Millisecond }),
		beforeStart(func(e *env) {
			e.createNode("node-a", "a")
			e.createClassWithBinding(lateClass, storagev1.VolumeBindingWaitForFirstConsumer)
		}))
	e.waitForCapacity(lateClass, "a", 10*gib)

	driver.set("a", 3*gib)
	e.waitForCapacity(lateClass, "a", 3*gib)
}

func TestCapacityIsRefreshedAfterProvisioningAndDeletion(t *testing.T) {
	driver := newCapacities(map[string]int64{"a": 10 * gib})
	e := startEnv(t, withCapacity(driver),
		driverWith(csitest.WithAccessibilityConstraints(true), csitest.WithTopology(map[string]string{zoneKey: "a"})),
		beforeStart(func(e *env) {
			e.createNode("node-a", "a")
			e.createClassWithBinding(lateClass, storagev1.VolumeBindingWaitForFirstConsumer)
		}))
	e.waitForCapacity(lateClass, "a", 10*gib)

	// The volume takes 1Gi; only the refresh after provisioning can tell,
	// the next poll is an hour away.
	driver.set("a", 9*gib)
	pv := e.waitForPV(e.createClaim("apps", "data", inClass(lateClass), selectedNode("node-a")))
	e.waitForCapacity(lateClass, "a", 9*gib)

	driver.set("a", 10*gib)
	pv.Status.Phase = v1.VolumeReleased
	if _, err := e.kube.CoreV1().PersistentVolumes().UpdateStatus(e.ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitForCapacity(lateClass, "a", 10*gib)
}

// As upstream, a driver without GET_CAPACITY is not refused: it provisions,
// and its capacity is asked for (and retried) in vain.
func TestDriverWithoutGetCapacityStillProvisions(t *testing.T) {
	e := startEnv(t, withCapacity(newCapacities(nil)),
		driverWith(csitest.WithCapabilities(csispec.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME)),
		beforeStart(func(e *env) {
			e.driver.SetGetCapacityHook(nil) // Unimplemented
			e.createNode("node-a", "a")
			e.createClassWithBinding(lateClass, storagev1.VolumeBindingWaitForFirstConsumer)
		}))

	e.waitForPV(e.createClaim("apps", "data"))
	e.waitFor("a GetCapacity call", func() bool { return len(e.driver.GetCapacityRequests()) > 0 })
	if got := e.capacityObjects(lateClass); len(got) != 0 {
		t.Errorf("capacity objects %v without a GetCapacity answer, want none", got)
	}
}

func inClass(name string) claimOption {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = &name }
}

// selectedNode is the scheduler's choice for a late-binding claim.
func selectedNode(node string) claimOption {
	return func(c *v1.PersistentVolumeClaim) { c.Annotations["volume.kubernetes.io/selected-node"] = node }
}
