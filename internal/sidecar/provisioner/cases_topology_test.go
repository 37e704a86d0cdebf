package provisioner

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	csiclient "github.com/xns-csi/csi-provisioner/internal/sidecar/csi"
)

// Topology as upstream computes it, from the node and CSINode caches. The
// rules themselves are table-tested in internal/sidecar/topology.

const (
	zoneKey = "topology.example.com/zone"
	rackKey = "topology.example.com/rack"
)

// topologyAware is a driver with VOLUME_ACCESSIBILITY_CONSTRAINTS.
var topologyAware = capsWith(func(c *csiclient.Capabilities) { c.AccessibilityConstraints = true })

// zonedNode is a node in zone with the driver registered (CSINode) under
// the zone key.
func zonedNode(name, zone string) []runtime.Object {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{zoneKey: zone}}}
	csiNode := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: driver, NodeID: name, TopologyKeys: []string{zoneKey}}}}}
	return []runtime.Object{node, csiNode}
}

// threeZones is a cluster of nodes n-a, n-b and n-c in zones a, b and c.
func threeZones(objs ...runtime.Object) []runtime.Object {
	out := objects(objs...)
	for _, z := range []string{"a", "b", "c"} {
		out = append(out, zonedNode("n-"+z, z)...)
	}
	return out
}

func TestTopology(t *testing.T) {
	runFramework(t, []frameworkCase{
		{
			// StatefulSet replicas web-db-0 and web-db-1 start one zone apart.
			name:    "immediate binding offers every zone, preferring them rotated by a hash of the claim name",
			caps:    topologyAware,
			options: func(o *Options) { o.ImmediateTopology = true },
			objects: threeZones(ours(), ours(named("web-db-0", "uid-0")), ours(named("web-db-1", "uid-1"))),
			steps:   []step{provision("test/web-db-0", created), provision("test/web-db-1", created)},
			want: []string{
				"CreateVolume pvc-uid-0 in [" + zoneKey + "=a " + zoneKey + "=b " + zoneKey + "=c] preferring [" + zoneKey + "=b " + zoneKey + "=c " + zoneKey + "=a]",
				"provision test/web-db-0: Finished, PV pvc-uid-0 of id-pvc-uid-0",
				"CreateVolume pvc-uid-1 in [" + zoneKey + "=a " + zoneKey + "=b " + zoneKey + "=c] preferring [" + zoneKey + "=c " + zoneKey + "=a " + zoneKey + "=b]",
				"provision test/web-db-1: Finished, PV pvc-uid-1 of id-pvc-uid-1",
			},
		},
		{
			name:    "without --immediate-topology an immediately bound volume has no requirement",
			caps:    topologyAware,
			objects: threeZones(ours()),
			steps:   []step{provision("test/data", created)},
			want:    []string{create, provisioned},
		},
		{
			name:    "a late-bound volume prefers the selected node's zone",
			caps:    topologyAware,
			objects: threeZones(ours()),
			steps:   []step{provisionOn("test/data", "n-b", created)},
			want: []string{
				create + " in [" + zoneKey + "=a " + zoneKey + "=b " + zoneKey + "=c] preferring [" + zoneKey + "=b " + zoneKey + "=c " + zoneKey + "=a]",
				provisioned,
			},
		},
		{
			// As v6.4.0 (#1582): a node with the zone label but without the
			// driver's registration counts for no zone, and a node that
			// registered a finer key set adds segments of its own.
			name:    "immediate binding aggregates each registered key set, over the nodes that registered it",
			caps:    topologyAware,
			options: func(o *Options) { o.ImmediateTopology = true },
			objects: threeZones(ours(),
				&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n-unregistered", Labels: map[string]string{zoneKey: "d"}}},
				&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n-rack", Labels: map[string]string{zoneKey: "a", rackKey: "1"}}},
				&storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n-rack"},
					Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: driver, NodeID: "n-rack", TopologyKeys: []string{rackKey, zoneKey}}}}}),
			steps: []step{provision("test/data", created)},
			want: []string{
				create + " in [" + zoneKey + "=a " + zoneKey + "=b " + zoneKey + "=c " + rackKey + "=1," + zoneKey + "=a] preferring [" +
					zoneKey + "=b " + zoneKey + "=c " + rackKey + "=1," + zoneKey + "=a " + zoneKey + "=a]",
				provisioned,
			},
		},
		{
			name:    "a selected node without CSINode goes back to the scheduler",
			caps:    topologyAware,
			objects: threeZones(ours()),
			steps:   []step{provisionOn("test/data", "n-gone")},
			want:    []string{`provision test/data: Reschedule, error: failed to get selected CSINode n-gone: csinode.storage.k8s.io "n-gone" not found`},
		},
		{
			name:    "a selected node without the driver's keys is retried",
			caps:    topologyAware,
			objects: threeZones(ours(), &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n-bare"}}),
			steps:   []step{provisionOn("test/data", "n-bare")},
			want:    []string{"provision test/data: NoChange, error: error generating accessibility requirements: no topology key found for node n-bare"},
		},
	})
}
