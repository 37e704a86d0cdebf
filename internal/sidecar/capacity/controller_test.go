package capacity

import (
	"maps"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

// The driver's answers in upstream's tests: 1Gi in layer0=foo, 2Gi in
// layer0=bar.
var fooAndBar = map[string]string{"layer0=foo": "1Gi", "layer0=bar": "2Gi"}

const ownerSuffix = " owner=StatefulSet/test-driver(controller)"

func TestStartCreatesUpdatesAndDeletes(t *testing.T) {
	// Upstream's "two segments, two classes, two added, two removed".
	h := start(t, setup{
		capacity: fooAndBar,
		objects: objects(nodeWith("node1", layer0), nodeWith("node2", layer0other),
			classes(newClass("direct-sc"), newClass("triple-sc", withParameters(map[string]string{"multiplier": "3"}))),
			capacityObjects(
				newCapacity("test-capacity-1", "old-direct-sc", layer0, available("1Mi")),
				newCapacity("test-capacity-2", "old-triple-sc", layer0, available("3Mi")),
				newCapacity("test-capacity-3", "direct-sc", layer0other, available("2Mi")),
				newCapacity("test-capacity-4", "triple-sc", layer0other, available("6Mi")))),
	})
	h.expect("start",
		"GetCapacity {layer0=foo} map[]",
		"GetCapacity {layer0=bar} map[]",
		"GetCapacity {layer0=foo} map[multiplier:3]",
		"GetCapacity {layer0=bar} map[multiplier:3]",
		"create direct-sc {layer0=foo} 1Gi"+ownerSuffix,
		"create triple-sc {layer0=foo} 3Gi"+ownerSuffix,
		"update direct-sc {layer0=bar} 2Gi"+ownerSuffix,
		"update triple-sc {layer0=bar} 6Gi"+ownerSuffix,
		"delete old-direct-sc {layer0=foo} 1Mi"+ownerSuffix,
		"delete old-triple-sc {layer0=foo} 3Mi"+ownerSuffix,
	)
}

func TestNoWritesWhenNothingChanged(t *testing.T) {
	h := start(t, setup{
		capacity: fooAndBar,
		objects: objects(nodeWith("node1", layer0), nodeWith("node2", layer0other), classes(newClass("late-sc")),
			capacityObjects(newCapacity("csisc-a", "late-sc", layer0), newCapacity("csisc-b", "late-sc", layer0other, available("2Gi")))),
	})
	h.expect("start", "GetCapacity {layer0=foo} map[]", "GetCapacity {layer0=bar} map[]")
	h.tick()
	h.expect("poll", "GetCapacity {layer0=foo} map[]", "GetCapacity {layer0=bar} map[]")
}

// startLateSC starts with two segments and one class, and waits for their
// objects.
func startLateSC(t *testing.T) *harness {
	t.Helper()
	h := start(t, setup{
		capacity: fooAndBar,
		objects:  objects(nodeWith("node1", layer0), nodeWith("node2", layer0other), classes(newClass("late-sc"))),
	})
	h.expect("start", "GetCapacity {layer0=foo} map[]", "GetCapacity {layer0=bar} map[]",
		"create late-sc {layer0=foo} 1Gi"+ownerSuffix, "create late-sc {layer0=bar} 2Gi"+ownerSuffix)
	return h
}

func TestPollPublishesChangedCapacity(t *testing.T) {
	// Upstream's "storage capacity change".
	h := startLateSC(t)
	h.driver.set("layer0=foo", "2Gi,1Gi")
	h.expect("capacity changes: nothing happens before the poll")
	h.tick()
	h.expect("poll", "GetCapacity {layer0=foo} map[]", "GetCapacity {layer0=bar} map[]",
		"update late-sc {layer0=foo} 2Gi max=1Gi"+ownerSuffix)
}

func TestNewClassIsPublishedAtOnce(t *testing.T) {
	h := startLateSC(t)
	h.create(newClass("triple-sc", withParameters(map[string]string{"multiplier": "3"})))
	h.expect("class added, no poll", "GetCapacity {layer0=foo} map[multiplier:3]", "GetCapacity {layer0=bar} map[multiplier:3]",
		"create triple-sc {layer0=foo} 3Gi"+ownerSuffix, "create triple-sc {layer0=bar} 6Gi"+ownerSuffix)

	h.create(newClass("immediate-sc", bindsImmediately()))
	h.create(newClass("foreign-sc", ofDriver("other-driver")))
	h.expect("classes that are not tracked added")
}

func TestDeletedClassLosesItsObjects(t *testing.T) {
	h := start(t, setup{
		capacity: fooAndBar,
		objects:  objects(nodeWith("node1", layer0), classes(newClass("late-sc"), newClass("other-sc"))),
	})
	h.expect("start", "GetCapacity {layer0=foo} map[]", "GetCapacity {layer0=foo} map[]",
		"create late-sc {layer0=foo} 1Gi"+ownerSuffix, "create other-sc {layer0=foo} 1Gi"+ownerSuffix)

	must(t, h.client.StorageV1().StorageClasses().Delete(h.ctx, "other-sc", metav1.DeleteOptions{}))
	h.expect("class deleted", "delete other-sc {layer0=foo} 1Gi"+ownerSuffix)
}

func TestTopologyChanges(t *testing.T) {
	// Upstream's "add storage topology segment", "remove storage topology
	// segment" and "add and remove storage topology segment", through the
	// nodes that define the segments.
	h := start(t, setup{
		capacity: fooAndBar,
		objects:  objects(classes(newClass("immediate-sc", bindsImmediately()), newClass("late-sc"))),
	})
	h.expect("start without nodes")

	h.create(nodeWith("node1", layer0)[0])
	h.expect("a node without the driver")
	h.create(nodeWith("node1", layer0)[1])
	h.expect("the driver registered on the node", "GetCapacity {layer0=foo} map[]", "create late-sc {layer0=foo} 1Gi"+ownerSuffix)

	node, err := h.client.CoreV1().Nodes().Get(h.ctx, "node1", metav1.GetOptions{})
	must(t, err)
	node.Labels = map[string]string{"layer0": "bar", "unrelated": "label"}
	_, err = h.client.CoreV1().Nodes().Update(h.ctx, node, metav1.UpdateOptions{})
	must(t, err)
	h.expect("the node moved to another segment", "GetCapacity {layer0=bar} map[]",
		"create late-sc {layer0=bar} 2Gi"+ownerSuffix, "delete late-sc {layer0=foo} 1Gi"+ownerSuffix)

	node.Labels["unrelated"] = "changed"
	_, err = h.client.CoreV1().Nodes().Update(h.ctx, node, metav1.UpdateOptions{})
	must(t, err)
	h.expect("an unrelated label changed")

	must(t, h.client.StorageV1().CSINodes().Delete(h.ctx, "node1", metav1.DeleteOptions{}))
	h.expect("the driver left the node", "delete late-sc {layer0=bar} 2Gi"+ownerSuffix)
}

func TestObjectsChangedBySomeoneElse(t *testing.T) {
	h := start(t, setup{
		capacity: fooAndBar,
		objects:  objects(nodeWith("node1", layer0), classes(newClass("late-sc"))),
	})
	h.expect("start", "GetCapacity {layer0=foo} map[]", "create late-sc {layer0=foo} 1Gi"+ownerSuffix)
	ours := func() *storagev1.CSIStorageCapacity {
		list, err := h.client.StorageV1().CSIStorageCapacities(namespace).List(h.ctx, metav1.ListOptions{})
		must(t, err)
		for i := range list.Items {
			if list.Items[i].Labels[ManagedByLabel] == DefaultManagedBy {
				return &list.Items[i]
			}
		}
		t.Fatal("no object of ours")
		return nil
	}

	// Upstream's "re-create capacity": the driver is not asked again.
	must(t, h.client.StorageV1().CSIStorageCapacities(namespace).Delete(h.ctx, ours().Name, metav1.DeleteOptions{}))
	h.expect("deleted by someone", "delete late-sc {layer0=foo} 1Gi"+ownerSuffix, "create late-sc {layer0=foo} 1Gi"+ownerSuffix)

	// Upstream's "delete and recreate by someone" with a wrong capacity.
	obj := ours()
	obj.Capacity = ptrTo(resource.MustParse("1Mi"))
	_, err := h.client.StorageV1().CSIStorageCapacities(namespace).Update(h.ctx, obj, metav1.UpdateOptions{})
	must(t, err)
	h.expect("capacity changed by someone", "update late-sc {layer0=foo} 1Mi"+ownerSuffix, "update late-sc {layer0=foo} 1Gi"+ownerSuffix)

	// Upstream's "ignore capacity after owner change": without our labels
	// the object is someone else's; ours is made anew.
	obj = ours()
	obj.Labels = nil
	_, err = h.client.StorageV1().CSIStorageCapacities(namespace).Update(h.ctx, obj, metav1.UpdateOptions{})
	must(t, err)
	h.expect("labels removed by someone", "update late-sc {layer0=foo} 1Gi"+ownerSuffix, "create late-sc {layer0=foo} 1Gi"+ownerSuffix)
	if got := len(h.capacities()); got != 2 {
		t.Errorf("%d objects exist, want the foreign one and ours", got)
	}
}

func TestOwnerReferences(t *testing.T) {
	stale := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "old", UID: "old-uid", Controller: ptrTo(true)}
	existing := capacityObjects(
		newCapacity("csisc-a", "late-sc", layer0, ownerRefs()),
		newCapacity("csisc-b", "late-sc", layer0other, available("2Gi"), ownerRefs(stale)),
	)
	t.Run("objects get the owner", func(t *testing.T) {
		h := start(t, setup{capacity: fooAndBar, objects: objects(nodeWith("node1", layer0), nodeWith("node2", layer0other),
			nodeWith("node3", deep), classes(newClass("late-sc")), existing)})
		h.expect("start", "GetCapacity {layer0=foo} map[]", "GetCapacity {layer0=bar} map[]",
			"GetCapacity {layer0=foo,layer1=X,layer2=A} map[]",
			"update late-sc {layer0=foo} 1Gi"+ownerSuffix, "update late-sc {layer0=bar} 2Gi"+ownerSuffix,
			"create late-sc {layer0=foo,layer1=X,layer2=A} 0"+ownerSuffix)
	})
	t.Run("without an owner objects keep theirs", func(t *testing.T) {
		h := start(t, setup{capacity: fooAndBar, objects: objects(nodeWith("node1", layer0), nodeWith("node2", layer0other),
			nodeWith("node3", deep), classes(newClass("late-sc")), existing),
			config: func(c *Config) { c.Owner = nil }})
		h.expect("start", "GetCapacity {layer0=foo} map[]", "GetCapacity {layer0=bar} map[]",
			"GetCapacity {layer0=foo,layer1=X,layer2=A} map[]", "create late-sc {layer0=foo,layer1=X,layer2=A} 0")
	})
}

func TestFailuresAreRetried(t *testing.T) {
	h := start(t, setup{
		capacity: fooAndBar,
		objects:  objects(nodeWith("node1", layer0), classes(newClass("late-sc"))),
	})
	h.driver.failNext(1)
	h.failNext("create")
	h.expect("start", "GetCapacity {layer0=foo} map[] failed", "GetCapacity {layer0=foo} map[]",
		"create failed", "create late-sc {layer0=foo} 1Gi"+ownerSuffix)

	h.driver.set("layer0=foo", "3Gi")
	h.failNext("update")
	h.tick()
	h.expect("poll", "GetCapacity {layer0=foo} map[]", "update failed", "update late-sc {layer0=foo} 3Gi"+ownerSuffix)
}

func TestImmediateBinding(t *testing.T) {
	// Upstream's "add storage topology segment, immediate binding".
	h := start(t, setup{
		capacity: fooAndBar,
		objects:  objects(classes(newClass("immediate-sc", bindsImmediately()), newClass("late-sc"))),
		config:   func(c *Config) { c.ImmediateBinding = true },
	})
	h.expect("start")
	h.create(nodeWith("node1", layer0)[0])
	h.create(nodeWith("node1", layer0)[1])
	h.expect("segment added", "GetCapacity {layer0=foo} map[]", "GetCapacity {layer0=foo} map[]",
		"create immediate-sc {layer0=foo} 1Gi"+ownerSuffix, "create late-sc {layer0=foo} 1Gi"+ownerSuffix)
}

func TestFixedSegment(t *testing.T) {
	// One sidecar per node: the node's segment is fixed, nodes are not
	// watched, and objects carry the node's managed-by label.
	seg := NewSegment(layer0)
	managedBy := ManagedByForNode("node1")
	theirs := newCapacity("csisc-other-node", "late-sc", layer0other, labeled(map[string]string{DriverNameLabel: driver, ManagedByLabel: ManagedByForNode("node2")}))
	h := start(t, setup{
		capacity: fooAndBar,
		objects:  objects(classes(newClass("late-sc")), capacityObjects(theirs)),
		config: func(c *Config) {
			c.FixedSegment, c.Nodes, c.CSINodes, c.ManagedBy = &seg, nil, nil, managedBy
		},
	})
	h.expect("start", "GetCapacity {layer0=foo} map[]", "create late-sc {layer0=foo} 1Gi"+ownerSuffix)
	got := map[string]string{}
	for _, obj := range h.mustList() {
		got[obj.StorageClassName+" "+segmentString(&obj)] = obj.Labels[ManagedByLabel]
	}
	want := map[string]string{"late-sc {layer0=foo}": "external-provisioner-node1", "late-sc {layer0=bar}": "external-provisioner-node2"}
	if !maps.Equal(got, want) {
		t.Errorf("objects and their managed-by labels: %v, want %v", got, want)
	}
}

func (h *harness) mustList() []storagev1.CSIStorageCapacity {
	list, err := h.client.StorageV1().CSIStorageCapacities(namespace).List(h.ctx, metav1.ListOptions{})
	must(h.t, err)
	return list.Items
}

func TestNewRefusesIncompleteConfig(t *testing.T) {
	valid := func() Config {
		client := kubefake.NewClientset()
		f := informers.NewSharedInformerFactory(client, 0)
		return Config{DriverName: driver, Namespace: namespace, Client: client, CSI: &fakeDriver{},
			StorageClasses: f.Storage().V1().StorageClasses(), Nodes: f.Core().V1().Nodes(), CSINodes: f.Storage().V1().CSINodes()}
	}
	if _, err := New(valid()); err != nil {
		t.Fatalf("New refused a complete configuration: %v", err)
	}
	tests := map[string]func(*Config){
		"no driver name":                      func(c *Config) { c.DriverName = "" },
		"no namespace":                        func(c *Config) { c.Namespace = "" },
		"a managed-by that is no label value": func(c *Config) { c.ManagedBy = "not a label" },
		"no CSI client":                       func(c *Config) { c.CSI = nil },
		"no nodes without a fixed segment":    func(c *Config) { c.Nodes = nil },
		"a negative poll interval":            func(c *Config) { c.PollInterval = -1 },
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			c := valid()
			change(&c)
			if _, err := New(c); err == nil {
				t.Error("New accepted the configuration")
			}
		})
	}
}
