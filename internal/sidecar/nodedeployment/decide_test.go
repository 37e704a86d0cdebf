package nodedeployment

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// TestDecide holds upstream's node-deployment cases of TestProvision
// ("distributed, ..."; the class there has no binding mode unless named
// immediate) and the branches of its checkNode.
func TestDecide(t *testing.T) {
	foo := &Local{Name: "foo", Segment: map[string]string{topologyKey: "foo"}}
	noBindingMode := &storagev1.StorageClass{}
	zoneA := newClass("zone-a", storagev1.VolumeBindingImmediate, func(c *storagev1.StorageClass) {
		c.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: "zone", Values: []string{"a"}}}}}
	})
	tests := []struct {
		name   string
		in     Input
		want   Action
		reason Reason
	}{
		{"distributed, right node selected: provisioned here",
			Input{Node: "foo", SelectedNode: "foo", Class: noBindingMode}, Provision, ReasonSelectedHere},
		{"distributed, no node selected: not this node's (yet)",
			Input{Node: "foo", Class: noBindingMode}, Ignore, ReasonWaitingForScheduler},
		{"distributed, wrong node selected: left to that node",
			Input{Node: "foo", SelectedNode: "bar", Class: noBindingMode}, Ignore, ReasonSelectedElsewhere},
		{"distributed immediate, right node selected: provisioned here",
			Input{Node: "foo", SelectedNode: "foo", Class: immediate, ImmediateBinding: true}, Provision, ReasonSelectedHere},
		{"distributed immediate, no node selected: this node tries to claim it",
			Input{Node: "foo", Class: immediate, ImmediateBinding: true}, Claim, ReasonUnclaimed},
		{"distributed immediate, allowed topologies okay: claimed",
			Input{Node: "foo", Class: newClass("c", storagev1.VolumeBindingImmediate, allowedNodes("foo")), ImmediateBinding: true, Topology: foo},
			Claim, ReasonUnclaimed},
		{"distributed immediate, allowed topologies not okay: never claimed",
			Input{Node: "foo", Class: newClass("c", storagev1.VolumeBindingImmediate, allowedNodes("bar")), ImmediateBinding: true, Topology: foo},
			Ignore, ReasonTopologyMismatch},
		{"allowed topologies are not checked for a driver without topology, as upstream",
			Input{Node: "foo", Class: newClass("c", storagev1.VolumeBindingImmediate, allowedNodes("bar")), ImmediateBinding: true},
			Claim, ReasonUnclaimed},
		{"a node whose driver reported no topology cannot serve allowed topologies",
			Input{Node: "foo", Class: newClass("c", storagev1.VolumeBindingImmediate, allowedNodes("foo")), ImmediateBinding: true,
				Topology: &Local{Name: "foo"}},
			Ignore, ReasonTopologyMismatch},
		{"an allowed term among several admits the node",
			Input{Node: "foo", Class: newClass("c", storagev1.VolumeBindingImmediate, allowedNodes("bar", "foo")), ImmediateBinding: true, Topology: foo},
			Claim, ReasonUnclaimed},
		{"an allowed term naming fewer keys than the node has admits it, as upstream",
			Input{Node: "foo", Class: zoneA, ImmediateBinding: true,
				Topology: &Local{Name: "foo", Segment: map[string]string{topologyKey: "foo", "zone": "a"}}},
			Claim, ReasonUnclaimed},
		{"an allowed term with a key the node lacks excludes it",
			Input{Node: "foo", Class: zoneA, ImmediateBinding: true, Topology: foo}, Ignore, ReasonTopologyMismatch},
		{"a late-binding class without selected node waits for the scheduler",
			Input{Node: "foo", Class: late, ImmediateBinding: true}, Ignore, ReasonWaitingForScheduler},
		{"an immediate class with --node-deployment-immediate-binding=false is left to another controller",
			Input{Node: "foo", Class: immediate}, Ignore, ReasonImmediateBindingDisabled},
		{"a claim selected for another node is left alone whatever its class",
			Input{Node: "foo", SelectedNode: "bar", Class: immediate, ImmediateBinding: true, Topology: foo}, Ignore, ReasonSelectedElsewhere},
		{"the selected node decides even when allowedTopologies exclude it",
			Input{Node: "foo", SelectedNode: "foo", Class: newClass("c", storagev1.VolumeBindingImmediate, allowedNodes("bar")), ImmediateBinding: true, Topology: foo},
			Provision, ReasonSelectedHere},
		{"an unknown class without selected node counts as late binding",
			Input{Node: "foo", ImmediateBinding: true}, Ignore, ReasonWaitingForScheduler},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.in)
			if got.Action != tt.want || got.Reason != tt.reason {
				t.Errorf("Decide = %s (%s: %s), want %s (%s)", got.Action, got.Reason, got.Message, tt.want, tt.reason)
			}
			if got.Message == "" {
				t.Error("decision without message")
			}
		})
	}
}

func TestSelectedNode(t *testing.T) {
	if got := SelectedNode(newClaim(selectedNode("foo"))); got != "foo" {
		t.Errorf("SelectedNode = %q, want foo", got)
	}
	claim := newClaim()
	claim.Annotations = nil
	if got := SelectedNode(claim); got != "" {
		t.Errorf("SelectedNode of a claim without annotations = %q", got)
	}
}
