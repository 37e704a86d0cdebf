package capacity

import (
	"maps"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The topologies of upstream's nodes_test.go: local storage (one segment
// per node) and network storage (three levels, region/zone/rack style).
var (
	localKeys   = []string{"nodename"}
	localNode1  = map[string]string{"nodename": "node1"}
	localNode2  = map[string]string{"nodename": "node2"}
	networkKeys = []string{"A", "B", "C"}
	network1    = map[string]string{"A": "US", "B": "NY", "C": "1"}
	network2    = map[string]string{"A": "US", "B": "NY", "C": "2"}
)

// testNode is a Node and its CSINode: drivers maps a driver to the topology
// keys it registered (nil keys: registered without topology).
type testNode struct {
	name              string
	labels            map[string]string
	drivers           map[string][]string
	noNode, noCSINode bool
}

func makeNodes(in []testNode) ([]*v1.Node, []*storagev1.CSINode) {
	var nodes []*v1.Node
	var csiNodes []*storagev1.CSINode
	for _, n := range in {
		if !n.noNode {
			nodes = append(nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: n.labels}})
		}
		if !n.noCSINode {
			cn := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: n.name}}
			for _, d := range slices.Sorted(maps.Keys(n.drivers)) {
				cn.Spec.Drivers = append(cn.Spec.Drivers, storagev1.CSINodeDriver{Name: d, TopologyKeys: n.drivers[d]})
			}
			csiNodes = append(csiNodes, cn)
		}
	}
	return nodes, csiNodes
}

// TestSegments ports the cases of upstream's TestNodeTopology; its update
// cases are stated as the cluster after the update.
func TestSegments(t *testing.T) {
	ours := func(keys []string) map[string][]string { return map[string][]string{driver: keys} }
	tests := map[string]struct {
		nodes []testNode
		want  []map[string]string
	}{
		"no nodes, no segments": {},
		"one node with local storage is one segment": {
			nodes: []testNode{{name: "node1", drivers: ours(localKeys), labels: localNode1}},
			want:  []map[string]string{localNode1},
		},
		"a node without CSINode has no segment": {
			nodes: []testNode{{name: "node1", drivers: ours(localKeys), labels: localNode1, noCSINode: true}},
		},
		"a CSINode without its Node has no segment": {
			nodes: []testNode{{name: "node1", drivers: ours(localKeys), labels: localNode1, noNode: true}},
		},
		"a node lacking the topology label has no segment yet": {
			nodes: []testNode{{name: "node1", drivers: ours(localKeys)}},
		},
		"two nodes with local storage are two segments": {
			nodes: []testNode{
				{name: "node1", drivers: ours(localKeys), labels: localNode1},
				{name: "node2", drivers: ours(localKeys), labels: localNode2},
			},
			want: []map[string]string{localNode1, localNode2},
		},
		"two nodes sharing storage are one segment": {
			nodes: []testNode{
				{name: "node1", drivers: ours(localKeys), labels: localNode1},
				{name: "node2", drivers: ours(localKeys), labels: localNode1},
			},
			want: []map[string]string{localNode1},
		},
		"two nodes sharing the other storage are one segment": {
			nodes: []testNode{
				{name: "node1", drivers: ours(localKeys), labels: localNode2},
				{name: "node2", drivers: ours(localKeys), labels: localNode2},
			},
			want: []map[string]string{localNode2},
		},
		"deep topology shared by two nodes is one segment": {
			nodes: []testNode{
				{name: "node1", drivers: ours(networkKeys), labels: network1},
				{name: "node2", drivers: ours(networkKeys), labels: network1},
			},
			want: []map[string]string{network1},
		},
		"nodes with different keys make a segment each": {
			nodes: []testNode{
				{name: "node1", drivers: ours(localKeys), labels: localNode1},
				{name: "node2", drivers: ours(networkKeys), labels: network1},
			},
			want: []map[string]string{network1, localNode1},
		},
		"deep topologies differing in the last level are two segments": {
			nodes: []testNode{
				{name: "node1", drivers: ours(networkKeys), labels: network1},
				{name: "node2", drivers: ours(networkKeys), labels: network2},
			},
			want: []map[string]string{network1, network2},
		},
		"the order of the registered keys makes no difference": {
			nodes: []testNode{
				{name: "node1", drivers: ours([]string{"C", "B", "A"}), labels: network1},
				{name: "node2", drivers: ours(networkKeys), labels: network1},
			},
			want: []map[string]string{network1},
		},
		"nodes of another driver have no segment of ours": {
			nodes: []testNode{{name: "node1", drivers: map[string][]string{"other-driver": localKeys}, labels: localNode1}},
		},
		"a node whose driver was removed from its CSINode has no segment": {
			nodes: []testNode{{name: "node1", labels: localNode1}},
		},
		"a node whose label was added but whose CSINode lacks the driver has no segment": {
			nodes: []testNode{{name: "node1", labels: localNode1}},
		},
		"a CSINode that got the driver but a node without the label has no segment": {
			nodes: []testNode{{name: "node1", drivers: ours(localKeys)}},
		},
		"a node whose label changed is in the new segment": {
			nodes: []testNode{{name: "node1", drivers: ours(localKeys), labels: localNode2}},
			want:  []map[string]string{localNode2},
		},
		"a driver without topology keys has the empty segment": {
			nodes: []testNode{
				{name: "node1", drivers: ours(nil), labels: localNode1},
				{name: "node2", drivers: ours([]string{}), labels: localNode2},
			},
			want: []map[string]string{{}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			nodes, csiNodes := makeNodes(tc.nodes)
			got := Segments(driver, nodes, csiNodes)
			var want []Segment
			for _, labels := range tc.want {
				want = append(want, NewSegment(labels))
			}
			if !slices.EqualFunc(got, want, func(a, b Segment) bool { return a.ID() == b.ID() }) {
				t.Errorf("Segments = %v, want %v", got, want)
			}
		})
	}
}

func TestSegmentsDoNotChangeTheCaches(t *testing.T) {
	nodes, csiNodes := makeNodes([]testNode{{name: "node1", drivers: map[string][]string{driver: {"C", "B", "A"}}, labels: network1}})
	Segments(driver, nodes, csiNodes)
	if keys := csiNodes[0].Spec.Drivers[0].TopologyKeys; !slices.Equal(keys, []string{"C", "B", "A"}) {
		t.Errorf("the CSINode's topology keys became %v", keys)
	}
}

func TestSegmentForms(t *testing.T) {
	seg := NewSegment(map[string]string{"zone": "a", "region": "eu"})
	if got, want := seg.ID(), "region=eu,zone=a"; got != want {
		t.Errorf("ID = %q, want %q", got, want)
	}
	if got, want := NewSegment(nil).String(), "{}"; got != want {
		t.Errorf("empty segment String = %q, want %q", got, want)
	}
	for name, sel := range map[string]*metav1.LabelSelector{
		"labels":            {MatchLabels: map[string]string{"zone": "a", "region": "eu"}},
		"labels as written": seg.Selector(),
	} {
		if got, ok := segmentOf(sel); !ok || got.ID() != seg.ID() {
			t.Errorf("%s: segmentOf = %v, %v; want %v", name, got, ok, seg)
		}
	}
	for name, sel := range map[string]*metav1.LabelSelector{
		"empty map as written":         NewSegment(nil).Selector(),
		"no labels, as the API stores": {},
	} {
		if got, ok := segmentOf(sel); !ok || len(got) != 0 {
			t.Errorf("%s: segmentOf = %v, %v; want the empty segment", name, got, ok)
		}
	}
	for name, sel := range map[string]*metav1.LabelSelector{
		"nil selects no node": nil,
		"expressions are not written by the controller": {MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"a"}},
		}},
	} {
		if got, ok := segmentOf(sel); ok {
			t.Errorf("%s: segmentOf = %v, want no segment", name, got)
		}
	}
}

// TestSegmentFromTerm ports upstream's TestTermToSegment.
func TestSegmentFromTerm(t *testing.T) {
	in := func(key string, values ...string) v1.NodeSelectorRequirement {
		return v1.NodeSelectorRequirement{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}
	}
	tests := map[string]struct {
		term    v1.NodeSelectorTerm
		want    string
		wantErr bool
	}{
		"node fields are no topology": {
			term:    v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{in("name", "worker-1")}},
			wantErr: true,
		},
		"an operator other than In": {
			term: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
				{Key: "segment", Operator: v1.NodeSelectorOpNotIn, Values: []string{"a"}},
			}},
			wantErr: true,
		},
		"two values for one key": {
			term:    v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{in("segment", "a", "b")}},
			wantErr: true,
		},
		"one key twice": {
			term:    v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{in("segment", "a"), in("segment", "b")}},
			wantErr: true,
		},
		"one label": {
			term: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{in("segment", "a")}},
			want: "segment=a",
		},
		"two labels": {
			term: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{in("segment", "a"), in("zone", "X")}},
			want: "segment=a,zone=X",
		},
		"two labels, unsorted": {
			term: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{in("zone", "X"), in("segment", "a")}},
			want: "segment=a,zone=X",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := SegmentFromTerm(tc.term)
			if (err != nil) != tc.wantErr {
				t.Fatalf("SegmentFromTerm error %v, want error: %v", err, tc.wantErr)
			}
			if !tc.wantErr && got.ID() != tc.want {
				t.Errorf("SegmentFromTerm = %v, want {%s}", got, tc.want)
			}
		})
	}
}
