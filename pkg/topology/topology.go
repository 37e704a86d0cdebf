// Package topology computes the CSI topology requirement of a new volume and
// the node affinity of its PV.
//
// It follows the upstream csi-provisioner's rules in a pure form: the caller
// gathers node labels and the driver's topology keys (from CSINode objects)
// out of informer caches and passes values in.
package topology

import (
	"fmt"
	"sort"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
)

// Node is the topology of one node on which the driver runs: the labels of
// the node restricted to the topology keys the driver reported in CSINode.
type Node struct {
	// Name is the node's name.
	Name string
	// Segment maps each topology key of the driver to the node's label value.
	Segment map[string]string
}

// Input is everything Requirement looks at.
type Input struct {
	// AllowedTopologies comes from the StorageClass.
	AllowedTopologies []v1.TopologySelectorTerm
	// SelectedNode is the node the scheduler picked (WaitForFirstConsumer),
	// nil for immediate binding.
	SelectedNode *Node
	// Nodes are all nodes with the driver, used to widen the requisite list.
	Nodes []Node
	// Strict restricts a late-bound volume to the selected node's segment
	// (--strict-topology).
	Strict bool
	// Immediate lets an immediately bound volume without allowedTopologies
	// be offered every segment of the cluster (--immediate-topology); when
	// off, such a volume carries no requirement and the driver chooses.
	Immediate bool
}

// Requirement returns the TopologyRequirement for CreateVolume, nil when the
// volume has no topology constraint.
func Requirement(in Input) (*csi.TopologyRequirement, error) {
	allowed := expandTerms(in.AllowedTopologies)
	if in.SelectedNode != nil {
		selected := in.SelectedNode.Segment
		if len(selected) == 0 {
			return nil, fmt.Errorf("node %q has no topology labels for this driver: is the driver registered there (CSINode)?", in.SelectedNode.Name)
		}
		if in.Strict {
			return &csi.TopologyRequirement{Requisite: toCSI(selected), Preferred: toCSI(selected)}, nil
		}
		requisite := allowed
		if len(requisite) == 0 {
			requisite = clusterSegments(in.Nodes, keysOf(selected))
		}
		if !contains(requisite, selected) {
			if len(allowed) > 0 {
				return nil, fmt.Errorf("selected node %q is in topology %v, which the StorageClass's allowedTopologies do not include", in.SelectedNode.Name, selected)
			}
			requisite = append(requisite, selected)
		}
		return build(requisite, selected), nil
	}
	if len(allowed) > 0 {
		return build(allowed, nil), nil
	}
	if !in.Immediate {
		return nil, nil
	}
	segments := clusterSegments(in.Nodes, nil)
	if len(segments) == 0 {
		return nil, nil
	}
	return build(segments, nil), nil
}

// NodeAffinity turns the accessible topology of a created volume into the
// PV's required node affinity: a node must match one of the segments.
func NodeAffinity(accessible []*csi.Topology) *v1.VolumeNodeAffinity {
	var terms []v1.NodeSelectorTerm
	for _, t := range accessible {
		if len(t.GetSegments()) == 0 {
			continue
		}
		var exprs []v1.NodeSelectorRequirement
		for _, k := range sortedKeys(t.GetSegments()) {
			exprs = append(exprs, v1.NodeSelectorRequirement{Key: k, Operator: v1.NodeSelectorOpIn, Values: []string{t.GetSegments()[k]}})
		}
		terms = append(terms, v1.NodeSelectorTerm{MatchExpressions: exprs})
	}
	if len(terms) == 0 {
		return nil
	}
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: terms}}
}

// build returns a requirement whose preferred list starts with first (if
// any) followed by the rest of requisite in a stable order.
func build(requisite []map[string]string, first map[string]string) *csi.TopologyRequirement {
	sortSegments(requisite)
	preferred := make([]map[string]string, 0, len(requisite))
	if first != nil {
		preferred = append(preferred, first)
	}
	for _, s := range requisite {
		if first == nil || !equal(s, first) {
			preferred = append(preferred, s)
		}
	}
	return &csi.TopologyRequirement{Requisite: toCSI(requisite...), Preferred: toCSI(preferred...)}
}

// expandTerms turns allowedTopologies into segments: each term is the
// cartesian product of its expressions' values.
func expandTerms(terms []v1.TopologySelectorTerm) []map[string]string {
	var out []map[string]string
	for _, term := range terms {
		product := []map[string]string{{}}
		for _, expr := range term.MatchLabelExpressions {
			var next []map[string]string
			for _, partial := range product {
				for _, value := range expr.Values {
					seg := copyMap(partial)
					seg[expr.Key] = value
					next = append(next, seg)
				}
			}
			product = next
		}
		for _, seg := range product {
			if len(seg) > 0 && !contains(out, seg) {
				out = append(out, seg)
			}
		}
	}
	return out
}

// clusterSegments returns the distinct segments of all nodes, restricted to
// nodes whose keys equal keys when keys is non-nil.
func clusterSegments(nodes []Node, keys []string) []map[string]string {
	var out []map[string]string
	for _, n := range nodes {
		if len(n.Segment) == 0 || (keys != nil && strings.Join(keysOf(n.Segment), ",") != strings.Join(keys, ",")) {
			continue
		}
		if !contains(out, n.Segment) {
			out = append(out, n.Segment)
		}
	}
	return out
}

func toCSI(segments ...map[string]string) []*csi.Topology {
	out := make([]*csi.Topology, 0, len(segments))
	for _, s := range segments {
		out = append(out, &csi.Topology{Segments: copyMap(s)})
	}
	return out
}

func contains(list []map[string]string, seg map[string]string) bool {
	for _, s := range list {
		if equal(s, seg) {
			return true
		}
	}
	return false
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func sortSegments(segs []map[string]string) {
	sort.SliceStable(segs, func(i, j int) bool { return key(segs[i]) < key(segs[j]) })
}

func key(seg map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(seg) {
		b.WriteString(k + "=" + seg[k] + ",")
	}
	return b.String()
}

func keysOf(m map[string]string) []string { return sortedKeys(m) }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// SegmentOf returns the node's segment: its labels for the driver's keys.
// A node missing one of the labels has no usable segment (nil).
func SegmentOf(labels map[string]string, keys []string) map[string]string {
	if len(keys) == 0 {
		return nil
	}
	seg := make(map[string]string, len(keys))
	for _, k := range keys {
		v, ok := labels[k]
		if !ok {
			return nil
		}
		seg[k] = v
	}
	return seg
}
