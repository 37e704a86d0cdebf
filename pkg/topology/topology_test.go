package topology

import (
	"reflect"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
)

const zoneKey = "topology.example.com/zone"

func zone(z string) map[string]string { return map[string]string{zoneKey: z} }

func zones(t []*csi.Topology) []string {
	var out []string
	for _, s := range t {
		out = append(out, s.GetSegments()[zoneKey])
	}
	return out
}

func TestRequirement(t *testing.T) {
	nodes := []Node{{Name: "n1", Segment: zone("a")}, {Name: "n2", Segment: zone("b")}, {Name: "n3", Segment: zone("a")}}
	allowedBC := []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: zoneKey, Values: []string{"c", "b"}}}}}
	tests := []struct {
		name          string
		in            Input
		wantNil       bool
		wantErr       bool
		wantRequisite []string
		wantPreferred []string
	}{
		{name: "immediate binding without allowedTopologies offers every zone of the cluster",
			in:            Input{Nodes: nodes, Immediate: true},
			wantRequisite: []string{"a", "b"}, wantPreferred: []string{"a", "b"}},
		{name: "immediate binding without --immediate-topology leaves the choice to the driver",
			in: Input{Nodes: nodes}, wantNil: true},
		{name: "immediate binding is restricted to allowedTopologies",
			in:            Input{Nodes: nodes, Immediate: true, AllowedTopologies: allowedBC},
			wantRequisite: []string{"b", "c"}, wantPreferred: []string{"b", "c"}},
		{name: "a selected node's zone is preferred first",
			in:            Input{Nodes: nodes, SelectedNode: &Node{Name: "n2", Segment: zone("b")}},
			wantRequisite: []string{"a", "b"}, wantPreferred: []string{"b", "a"}},
		{name: "strict topology offers only the selected node's zone",
			in:            Input{Nodes: nodes, Strict: true, SelectedNode: &Node{Name: "n2", Segment: zone("b")}},
			wantRequisite: []string{"b"}, wantPreferred: []string{"b"}},
		{name: "a selected node within allowedTopologies is preferred among them",
			in:            Input{Nodes: nodes, AllowedTopologies: allowedBC, SelectedNode: &Node{Name: "n2", Segment: zone("b")}},
			wantRequisite: []string{"b", "c"}, wantPreferred: []string{"b", "c"}},
		{name: "a selected node outside allowedTopologies is an error",
			in:      Input{Nodes: nodes, AllowedTopologies: allowedBC, SelectedNode: &Node{Name: "n1", Segment: zone("a")}},
			wantErr: true},
		{name: "a selected node without the driver's labels is an error",
			in:      Input{Nodes: nodes, SelectedNode: &Node{Name: "n9"}},
			wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Requirement(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Requirement() error = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if tt.wantNil {
				if got != nil {
					t.Fatalf("Requirement() = %v, want nil", got)
				}
				return
			}
			if r := zones(got.GetRequisite()); !reflect.DeepEqual(r, tt.wantRequisite) {
				t.Errorf("requisite = %v, want %v", r, tt.wantRequisite)
			}
			if p := zones(got.GetPreferred()); !reflect.DeepEqual(p, tt.wantPreferred) {
				t.Errorf("preferred = %v, want %v", p, tt.wantPreferred)
			}
		})
	}
}

func TestExpandTermsTakesTheCartesianProduct(t *testing.T) {
	terms := []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{
		{Key: "zone", Values: []string{"a", "b"}}, {Key: "rack", Values: []string{"1", "2"}},
	}}}
	if got := expandTerms(terms); len(got) != 4 {
		t.Fatalf("expandTerms() = %v, want 4 segments", got)
	}
}

func TestNodeAffinityRequiresOneOfTheAccessibleSegments(t *testing.T) {
	got := NodeAffinity([]*csi.Topology{{Segments: zone("a")}, {Segments: zone("b")}})
	terms := got.Required.NodeSelectorTerms
	if len(terms) != 2 || terms[1].MatchExpressions[0].Key != zoneKey || terms[1].MatchExpressions[0].Values[0] != "b" {
		t.Fatalf("NodeAffinity() = %+v", got)
	}
	if NodeAffinity(nil) != nil {
		t.Error("a volume without accessible topology must have no node affinity")
	}
}

func TestSegmentOf(t *testing.T) {
	labels := map[string]string{zoneKey: "a", "other": "x"}
	if got := SegmentOf(labels, []string{zoneKey}); !reflect.DeepEqual(got, zone("a")) {
		t.Errorf("SegmentOf() = %v", got)
	}
	if got := SegmentOf(labels, []string{zoneKey, "missing"}); got != nil {
		t.Errorf("a node missing a key must have no segment, got %v", got)
	}
}
