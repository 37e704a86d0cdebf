package capacity

import (
	"maps"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestRefresh ports upstream's TestRefresh: which objects a refresh by
// class or by a volume's topology asks the driver about again, at once.
func TestRefresh(t *testing.T) {
	triple := map[string]string{"multiplier": "3"}
	twoClasses := classes(newClass("direct-sc"), newClass("triple-sc", withParameters(triple)))
	tests := map[string]struct {
		segments []map[string]string
		class    string
		topology map[string]string
		want     []string
	}{
		"two segments, two classes, refresh storageclass": {
			segments: []map[string]string{layer0, layer0other},
			class:    "direct-sc",
			want:     []string{"GetCapacity {layer0=bar} map[]", "GetCapacity {layer0=foo} map[]"},
		},
		"two segments, two classes, refresh topology": {
			segments: []map[string]string{layer0, layer0other},
			topology: layer0other,
			want:     []string{"GetCapacity {layer0=bar} map[]", "GetCapacity {layer0=bar} map[multiplier:3]"},
		},
		"deep topology": {
			segments: []map[string]string{deep, deepOther},
			topology: deep,
			want: []string{"GetCapacity {layer0=foo,layer1=X,layer2=A} map[]",
				"GetCapacity {layer0=foo,layer1=X,layer2=A} map[multiplier:3]"},
		},
		"no such topology": {
			segments: []map[string]string{deep, deepOther},
			topology: map[string]string{"layer0": "foo", "layer1": "X", "layer2": "BBBBBBBBBBB"},
		},
		"no such storageclass": {
			segments: []map[string]string{deep, deepOther},
			class:    "no-such-sc",
		},
		"truncated topology": {
			segments: []map[string]string{deep, deepOther},
			topology: layer0,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := twoClasses
			for i, seg := range tc.segments {
				objs = append(slices.Clone(objs), nodeWith("node"+string(rune('1'+i)), seg)...)
			}
			h := start(t, setup{capacity: fooAndBar, objects: objs})
			h.waitIdle()
			h.takeLines()

			if tc.class != "" {
				h.ctrl.RefreshClass(tc.class)
			}
			if tc.topology != nil {
				h.ctrl.RefreshTopology(h.ctx, affinity(tc.topology))
			}
			h.expect("refresh", tc.want...)
		})
	}
}

func TestRefreshTopologySkipsTermsThatAreNoSegment(t *testing.T) {
	h := start(t, setup{capacity: fooAndBar, objects: objects(classes(newClass("late-sc")), nodeWith("node1", layer0))})
	h.waitIdle()
	h.takeLines()

	a := affinity(layer0)
	a.Required.NodeSelectorTerms = append([]v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
		{Key: "layer0", Operator: v1.NodeSelectorOpNotIn, Values: []string{"bar"}}}}}, a.Required.NodeSelectorTerms...)
	h.ctrl.RefreshTopology(h.ctx, a)
	h.ctrl.RefreshTopology(h.ctx, nil)
	h.expect("refresh", "GetCapacity {layer0=foo} map[]")
}

// affinity is the node affinity the provisioner writes for a volume
// accessible in one segment.
func affinity(segment map[string]string) *v1.VolumeNodeAffinity {
	var reqs []v1.NodeSelectorRequirement
	for _, k := range slices.Sorted(maps.Keys(segment)) {
		reqs = append(reqs, v1.NodeSelectorRequirement{Key: k, Operator: v1.NodeSelectorOpIn, Values: []string{segment[k]}})
	}
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: reqs}}}}
}
