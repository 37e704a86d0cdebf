package provisioner

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Review of issue 25 (#1582) at the provisioner's gathering step: the
// CSINodes of upstream v6.4.0's topology tests also list another driver
// (buildCSINodes: net.example.storage/other-driver with key
// net.example.storage/rack, and every node labeled with it). Only this
// driver's registration counts, on every node and on the selected one.

const otherRackKey = "net.example.storage/rack"

// withOtherDriver is a node labeled with zone (when not empty) and the
// other driver's rack, whose CSINode lists the other driver and, with
// keys, this driver.
func withOtherDriver(name, zone string, keys ...string) []runtime.Object {
	labels := map[string]string{otherRackKey: "rack1"}
	if zone != "" {
		labels[zoneKey] = zone
	}
	drivers := []storagev1.CSINodeDriver{{Name: "net.example.storage/other-driver", NodeID: name, TopologyKeys: []string{otherRackKey}}}
	if keys != nil {
		drivers = append(drivers, storagev1.CSINodeDriver{Name: driver, NodeID: name, TopologyKeys: keys})
	}
	return []runtime.Object{&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}},
		&storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.CSINodeSpec{Drivers: drivers}}}
}

func TestReview25AnotherDriversRegistrationDoesNotCount(t *testing.T) {
	cluster := func(objs ...runtime.Object) []runtime.Object {
		out := objects(append(objs, ours())...)
		out = append(out, withOtherDriver("n-a", "a", zoneKey)...)
		out = append(out, withOtherDriver("n-b", "b")...)                   // only the other driver
		out = append(out, withOtherDriver("n-c", "c", rackKey, zoneKey)...) // a finer key set, without its rack label
		return out
	}
	runFramework(t, []frameworkCase{
		{
			// n-c's finer registration covers the zone key, so it counts
			// under it ("finer registration contributes to the coarser key
			// set"); its own key set has no labeled node.
			name:    "immediate binding: only the nodes this driver registered keys on, with their labels",
			caps:    topologyAware,
			options: func(o *Options) { o.ImmediateTopology = true },
			objects: cluster(),
			steps:   []step{provision("test/data", created)},
			want:    []string{create + " in [" + zoneKey + "=a " + zoneKey + "=c] preferring [" + zoneKey + "=c " + zoneKey + "=a]", provisioned},
		},
		{
			name:    "a selected node where only another driver is registered is retried, as upstream",
			caps:    topologyAware,
			objects: cluster(),
			steps:   []step{provisionOn("test/data", "n-b")},
			want:    []string{"provision test/data: NoChange, error: error generating accessibility requirements: no topology key found for node n-b"},
		},
		{
			name: "a selected node whose CSINode exists but whose Node does not is retried, not rescheduled, as upstream",
			caps: topologyAware,
			objects: cluster(&storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n-ghost"}, Spec: storagev1.CSINodeSpec{
				Drivers: []storagev1.CSINodeDriver{{Name: driver, NodeID: "n-ghost", TopologyKeys: []string{zoneKey}}}}}),
			steps: []step{provisionOn("test/data", "n-ghost")},
			want: []string{"provision test/data: NoChange, error: error generating accessibility requirements: " +
				"topology labels from selected node map[] does not match topology keys from CSINode [" + zoneKey + "]"},
		},
		{
			name:    "a selected node registering the finer key set without its label is retried with upstream's message",
			caps:    topologyAware,
			objects: cluster(),
			steps:   []step{provisionOn("test/data", "n-c")},
			want: []string{"provision test/data: NoChange, error: error generating accessibility requirements: " +
				"topology labels from selected node map[" + otherRackKey + ":rack1 " + zoneKey + ":c] does not match topology keys from CSINode [" + rackKey + " " + zoneKey + "]"},
		},
	})
}
