package nodedeployment

import (
	"reflect"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func TestNewLocal(t *testing.T) {
	withTopology := NewLocal("foo", &csi.NodeGetInfoResponse{NodeId: "id-foo",
		AccessibleTopology: &csi.Topology{Segments: map[string]string{topologyKey: "foo", "zone": "a"}}})
	if want := (Local{Name: "foo", NodeID: "id-foo", Segment: map[string]string{topologyKey: "foo", "zone": "a"}}); !reflect.DeepEqual(withTopology, want) {
		t.Errorf("NewLocal = %+v, want %+v", withTopology, want)
	}
	if without := NewLocal("foo", &csi.NodeGetInfoResponse{NodeId: "id-foo"}); without.Segment != nil {
		t.Errorf("a driver without topology gave segment %v", without.Segment)
	}
}

// TestListers checks the static objects upstream builds for a node
// deployment: a Node labeled with the segment only, and a CSINode with the
// driver's node ID and the segment's keys.
func TestListers(t *testing.T) {
	local := Local{Name: "foo", NodeID: "id-foo", Segment: map[string]string{topologyKey: "foo", "zone": "a"}}
	nodes, csiNodes := local.Listers("csi.example.com")
	node, err := nodes.Get("foo")
	must(t, err)
	if !reflect.DeepEqual(node.Labels, local.Segment) {
		t.Errorf("node labels %v, want the segment %v", node.Labels, local.Segment)
	}
	csiNode, err := csiNodes.Get("foo")
	must(t, err)
	want := []storagev1.CSINodeDriver{{Name: "csi.example.com", NodeID: "id-foo", TopologyKeys: []string{topologyKey, "zone"}}}
	if !reflect.DeepEqual(csiNode.Spec.Drivers, want) {
		t.Errorf("CSINode drivers %+v, want %+v", csiNode.Spec.Drivers, want)
	}
	if all, err := nodes.List(labels.Everything()); err != nil || len(all) != 1 {
		t.Errorf("the node lister holds %d nodes (%v), want this one only", len(all), err)
	}
	if _, err := csiNodes.Get("bar"); err == nil {
		t.Error("the CSINode lister knows another node")
	}
	if got := (Local{Name: "foo"}).CSINode("d").Spec.Drivers[0].TopologyKeys; got != nil {
		t.Errorf("a driver without topology registered keys %v", got)
	}
}

func terms(terms ...v1.NodeSelectorTerm) *v1.VolumeNodeAffinity {
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: terms}}
}

func expr(key string, op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorRequirement {
	return v1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

// TestVolumeAccessible holds upstream's delete cases "distributed, ignore PV
// from other host" and "distributed, delete PV from our host", and the
// node-selector rules of VolumeIsAccessible.
func TestVolumeAccessible(t *testing.T) {
	foo := Local{Name: "foo", Segment: map[string]string{topologyKey: "foo"}}
	tests := []struct {
		name     string
		affinity *v1.VolumeNodeAffinity
		node     Local
		want     bool
		wantErr  bool
	}{
		{"distributed, ignore PV from other host",
			terms(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{expr(topologyKey, v1.NodeSelectorOpIn, "bar")}}), foo, false, false},
		{"distributed, delete PV from our host",
			terms(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{expr(topologyKey, v1.NodeSelectorOpIn, "foo")}}), foo, true, false},
		{"a volume without node affinity is everywhere", nil, foo, true, false},
		{"a volume without required affinity is everywhere", &v1.VolumeNodeAffinity{}, foo, true, false},
		{"a node whose driver reported no topology deletes everything",
			terms(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{expr(topologyKey, v1.NodeSelectorOpIn, "bar")}}), Local{Name: "foo"}, true, false},
		{"terms are ORed",
			terms(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{expr(topologyKey, v1.NodeSelectorOpIn, "bar")}},
				v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{expr(topologyKey, v1.NodeSelectorOpIn, "foo")}}), foo, true, false},
		{"expressions of a term are ANDed",
			terms(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{expr(topologyKey, v1.NodeSelectorOpIn, "foo"), expr("zone", v1.NodeSelectorOpExists)}}), foo, false, false},
		{"NotIn and DoesNotExist work on the segment",
			terms(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{expr(topologyKey, v1.NodeSelectorOpNotIn, "bar"), expr("zone", v1.NodeSelectorOpDoesNotExist)}}), foo, true, false},
		{"no terms match nothing", terms(), foo, false, false},
		{"an empty term matches nothing", terms(v1.NodeSelectorTerm{}), foo, false, false},
		{"matchFields select by node name",
			terms(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{expr("metadata.name", v1.NodeSelectorOpIn, "foo")}}), foo, true, false},
		{"matchFields of another node name exclude this node",
			terms(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{expr("metadata.name", v1.NodeSelectorOpIn, "bar")}}), foo, false, false},
		{"an invalid term alone is an error",
			terms(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{expr(topologyKey, "Near", "foo")}}), foo, false, true},
		{"an invalid term does not matter when another matches",
			terms(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{expr(topologyKey, v1.NodeSelectorOpIn)}},
				v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{expr(topologyKey, v1.NodeSelectorOpIn, "foo")}}), foo, true, false},
		{"matchFields with two values are invalid",
			terms(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{expr("metadata.name", v1.NodeSelectorOpIn, "foo", "bar")}}), foo, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := VolumeAccessible(tt.affinity, tt.node)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("VolumeAccessible = %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
