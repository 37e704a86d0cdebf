// Package topology computes the CSI topology requirement of a new volume and
// the node affinity of its PV.
//
// It follows the upstream csi-provisioner v6.4.0's rules
// (GenerateAccessibilityRequirements) in a pure form: the caller gathers
// each node's labels and the topology keys the driver registered in its
// CSINode out of informer caches and passes values in. As v6.4.0 (#1582),
// every distinct key set the driver registered is aggregated on its own
// for immediate binding, and a node counts under a key set only when the
// driver registered those keys on it. Where upstream keeps the requisite
// terms of a claim in memory so that its retries compute the same
// requirement, the result here depends on the cluster's state alone.
package topology

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
)

// SelectedNode is what the requirement reads about the node the scheduler
// picked (WaitForFirstConsumer).
type SelectedNode struct {
	// Name is the node's name.
	Name string
	// Keys are the topology keys the driver reported in the node's CSINode
	// (none when the driver is not registered there).
	Keys []string
	// Labels are the node's labels; nil when the node is not known.
	Labels map[string]string
}

// Node is a node of the cluster whose CSINode lists the driver.
type Node struct {
	// Name is the node's name.
	Name string
	// Keys are the topology keys the driver registered in the node's
	// CSINode; none when it registered none.
	Keys []string
	// Labels are the node's labels; nil when there is no Node object.
	Labels map[string]string
}

// Input is everything Requirement looks at.
type Input struct {
	// AllowedTopologies comes from the StorageClass.
	AllowedTopologies []v1.TopologySelectorTerm
	// ClaimName spreads immediately bound volumes over the topology
	// segments (see preferred).
	ClaimName string
	// Selected is the node the scheduler picked, nil for immediate binding.
	Selected *SelectedNode
	// Nodes are the nodes whose CSINode lists the driver: their labels'
	// values for the keys the driver registered on them make up the
	// segments of the cluster. Nodes without registered keys count for
	// nothing, whatever their labels (a CO may offer only topology the
	// driver reported).
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
//
// The requisite segments are, in this order of precedence: the selected
// node's alone under strict topology, the StorageClass's allowedTopologies,
// or every segment of the cluster for the driver's keys. They are sorted.
// The preferred segments are the requisite ones rotated: to the first one
// the selected node is in, or, for immediate binding, by a hash of the claim
// name so that volumes spread over the segments.
func Requirement(in Input) (*csi.TopologyRequirement, error) {
	var selected term
	var requisite []term
	if s := in.Selected; s != nil {
		var err error
		if selected, err = selectedTerm(*s); err != nil {
			return nil, err
		}
		if in.Strict {
			if err := checkAllowed(in.AllowedTopologies, s.Name, selected); err != nil {
				return nil, err
			}
			requisite = []term{selected}
		}
	}
	if len(requisite) == 0 {
		var err error
		if requisite, err = candidates(in); err != nil {
			return nil, err
		}
	}
	if len(requisite) == 0 {
		return nil, nil // no topology, or allowedTopologies of empty terms
	}
	slices.SortFunc(requisite, compare)
	requisite = slices.CompactFunc(requisite, slices.Equal)
	preferred, err := prefer(in, requisite, selected)
	if err != nil {
		return nil, err
	}
	return &csi.TopologyRequirement{Requisite: toCSI(requisite), Preferred: toCSI(preferred)}, nil
}

// selectedTerm is the selected node's segment for the driver's keys.
func selectedTerm(s SelectedNode) (term, error) {
	if len(s.Keys) == 0 {
		return nil, fmt.Errorf("no topology key found for node %s", s.Name)
	}
	t, ok := termOf(s.Labels, s.Keys)
	if !ok {
		return nil, fmt.Errorf("topology labels from selected node %v does not match topology keys from CSINode %v", s.Labels, s.Keys)
	}
	return t, nil
}

// checkAllowed tells whether the selected node's segment is within one of
// the allowedTopologies (which may name fewer keys than the node has).
func checkAllowed(allowed []v1.TopologySelectorTerm, node string, selected term) error {
	if len(allowed) == 0 {
		return nil
	}
	terms := flatten(allowed)
	for _, t := range terms {
		if t.subsetOf(selected) {
			return nil
		}
	}
	return fmt.Errorf("selected node '%q' topology '%v' is not in allowed topologies: %v", node, selected, terms)
}

// candidates are the requisite segments when the selected node alone is not
// the answer: allowedTopologies, or every segment of the cluster; nil when
// the volume has no constraint. The segments of the cluster are, with a
// selected node, those of its keys; for immediate binding, those of each
// distinct key set the driver registered, combined. Either way a node
// counts under keys only when the driver registered them on it.
func candidates(in Input) ([]term, error) {
	if len(in.AllowedTopologies) != 0 {
		return flatten(in.AllowedTopologies), nil
	}
	if in.Selected == nil && !in.Immediate {
		return nil, nil
	}
	var terms []term
	if in.Selected != nil {
		if terms = segmentsOf(in.Nodes, in.Selected.Keys); len(terms) == 0 {
			return nil, fmt.Errorf("topologyKeys %v were not found on any nodes", in.Selected.Keys)
		}
		return terms, nil
	}
	keySets := distinctKeySets(in.Nodes)
	if len(keySets) == 0 {
		// The driver has registered no topology on any node yet.
		return nil, fmt.Errorf("no available topology found")
	}
	for _, keys := range keySets {
		terms = append(terms, segmentsOf(in.Nodes, keys)...)
	}
	if len(terms) == 0 {
		return nil, fmt.Errorf("topologyKeys %v were not found on any nodes", keySets)
	}
	return terms, nil
}

// distinctKeySets are the key sets the driver registered on nodes, each
// sorted, without repeats, in order.
func distinctKeySets(nodes []Node) [][]string {
	var sets [][]string
	for _, n := range nodes {
		if len(n.Keys) == 0 {
			continue
		}
		keys := slices.Compact(slices.Sorted(slices.Values(n.Keys)))
		if !slices.ContainsFunc(sets, func(s []string) bool { return slices.Equal(s, keys) }) {
			sets = append(sets, keys)
		}
	}
	slices.SortFunc(sets, slices.Compare)
	return sets
}

// segmentsOf returns the segment for keys of each node the driver
// registered all of keys on and whose labels have them.
func segmentsOf(nodes []Node, keys []string) []term {
	var terms []term
	for _, n := range nodes {
		if !covers(n.Keys, keys) {
			continue
		}
		if t, ok := termOf(n.Labels, keys); ok {
			terms = append(terms, t)
		}
	}
	return terms
}

// covers reports whether registered holds every key of keys.
func covers(registered, keys []string) bool {
	for _, k := range keys {
		if !slices.Contains(registered, k) {
			return false
		}
	}
	return len(registered) > 0
}

// prefer orders the (sorted) requisite segments for the preferred list.
func prefer(in Input, requisite []term, selected term) ([]term, error) {
	switch {
	case in.Selected == nil:
		hash, index := claimNameHash(in.ClaimName)
		return rotate(requisite, int((hash+index)%uint32(len(requisite)))), nil
	case in.Strict:
		return requisite, nil
	}
	for i, t := range requisite {
		if t.subsetOf(selected) {
			return rotate(requisite, i), nil
		}
	}
	return nil, fmt.Errorf("topology %v from selected node %q is not in requisite: %v", selected, in.Selected.Name, requisite)
}

// rotate returns terms starting at index i, wrapping around.
func rotate(terms []term, i int) []term {
	return append(slices.Clone(terms[i:]), terms[:i]...)
}

// claimNameHash spreads the volumes of a StatefulSet over the segments the
// way Kubernetes' in-tree provisioners did (and upstream still does): a
// claim named ClaimName-StatefulSetName-Index hashes StatefulSetName only,
// offset by Index, so the replicas go round-robin and the claims of one
// replica stay together; any other name is hashed whole.
func claimNameHash(name string) (hash, index uint32) {
	base := name
	if dash := strings.LastIndexByte(name, '-'); dash >= 0 {
		if id, err := strconv.ParseUint(name[dash+1:], 10, 32); err == nil {
			index, base = uint32(id), name[:dash]
			if dash := strings.LastIndexByte(base, '-'); dash >= 0 {
				base = base[dash+1:]
			}
		}
	}
	h := fnv.New32()
	_, _ = h.Write([]byte(base))
	return h.Sum32(), index
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
		for _, k := range slices.Sorted(maps.Keys(t.GetSegments())) {
			exprs = append(exprs, v1.NodeSelectorRequirement{Key: k, Operator: v1.NodeSelectorOpIn, Values: []string{t.GetSegments()[k]}})
		}
		terms = append(terms, v1.NodeSelectorTerm{MatchExpressions: exprs})
	}
	if len(terms) == 0 {
		return nil
	}
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: terms}}
}
