package capacity

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Segment is one topology segment of the driver: the topology labels that a
// set of nodes share, sorted by key, each key once. The empty segment (a
// driver that reports no topology keys) spans every node it runs on.
type Segment []Entry

// Entry is one topology label of a segment.
type Entry struct {
	Key, Value string
}

// NewSegment returns the segment of the given topology labels.
func NewSegment(labels map[string]string) Segment {
	s := make(Segment, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		s = append(s, Entry{Key: k, Value: labels[k]})
	}
	return s
}

// ID is the segment's canonical form, "key=value,..." sorted by key: equal
// segments have equal IDs. Label keys and values contain neither '=' nor
// ',', so no two segments share an ID.
func (s Segment) ID() string {
	var b strings.Builder
	n := len(s)
	for _, e := range s {
		n += len(e.Key) + len(e.Value)
	}
	b.Grow(n)
	for i, e := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(e.Key)
		b.WriteByte('=')
		b.WriteString(e.Value)
	}
	return b.String()
}

// String is the ID in braces, so that the empty segment shows as "{}" in
// logs.
func (s Segment) String() string { return "{" + s.ID() + "}" }

// Labels returns the segment as a label map, never nil: CSI's accessible
// topology of GetCapacity and the node selector of a CSIStorageCapacity.
func (s Segment) Labels() map[string]string {
	labels := make(map[string]string, len(s))
	for _, e := range s {
		labels[e.Key] = e.Value
	}
	return labels
}

// Selector is the nodeTopology of the segment's CSIStorageCapacity objects:
// the segment's labels as matchLabels. The empty segment's selector is
// empty and so matches every node, as the API defines it.
func (s Segment) Selector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: s.Labels()}
}

// unmatchablePrefix starts the segment part of the key of an object whose
// nodeTopology is no segment (nil, or with matchExpressions). No label key
// starts with '!', so such a key is never desired.
const unmatchablePrefix = "!"

// segmentOf returns the segment that a nodeTopology selects, and false when
// it is nil or uses matchExpressions: the controller writes neither, so such
// an object never matches a segment. A selector without labels is the empty
// segment, however the empty map was spelled (the API server drops it).
func segmentOf(sel *metav1.LabelSelector) (Segment, bool) {
	if sel == nil || len(sel.MatchExpressions) > 0 {
		return nil, false
	}
	return NewSegment(sel.MatchLabels), true
}

// Segments derives the driver's topology segments from the cluster, as the
// upstream external-provisioner does (KEP-1472, "with central controller"):
// every node whose CSINode lists the driver contributes the segment made of
// the node's labels for the driver's topology keys. A CSINode without its
// Node, or a Node that lacks one of the labels (kubelet records the keys
// before the labels reach the Node), contributes nothing yet. The result is
// sorted by ID, each segment once.
func Segments(driverName string, nodes []*v1.Node, csiNodes []*storagev1.CSINode) []Segment {
	byName := make(map[string]*v1.Node, len(nodes))
	for _, n := range nodes {
		byName[n.Name] = n
	}
	type found struct {
		id  string
		seg Segment
	}
	seen := map[string]bool{}
	var out []found
csiNodes:
	for _, cn := range csiNodes {
		keys, ok := driverTopologyKeys(cn, driverName)
		if !ok {
			continue
		}
		node := byName[cn.Name]
		if node == nil {
			continue
		}
		labels := make(map[string]string, len(keys))
		for _, k := range keys {
			v, ok := node.Labels[k]
			if !ok {
				continue csiNodes
			}
			labels[k] = v
		}
		seg := NewSegment(labels)
		if id := seg.ID(); !seen[id] {
			seen[id] = true
			out = append(out, found{id, seg})
		}
	}
	slices.SortFunc(out, func(a, b found) int { return strings.Compare(a.id, b.id) })
	segments := make([]Segment, len(out))
	for i, f := range out {
		segments[i] = f.seg
	}
	return segments
}

// driverTopologyKeys returns the topology keys the driver registered on a
// node, and false when the driver does not run there.
func driverTopologyKeys(cn *storagev1.CSINode, driverName string) ([]string, bool) {
	for _, d := range cn.Spec.Drivers {
		if d.Name == driverName {
			return d.TopologyKeys, true
		}
	}
	return nil, false
}

// SegmentFromTerm returns the segment a node selector term of a volume's
// node affinity names. The provisioner writes such terms from the accessible
// topology of CreateVolume: label requirements with operator In and a single
// value, nothing else.
func SegmentFromTerm(term v1.NodeSelectorTerm) (Segment, error) {
	if len(term.MatchFields) > 0 {
		return nil, fmt.Errorf("term selects node fields %v, not topology labels", term.MatchFields)
	}
	labels := make(map[string]string, len(term.MatchExpressions))
	for _, req := range term.MatchExpressions {
		if req.Operator != v1.NodeSelectorOpIn {
			return nil, fmt.Errorf("requirement on %q uses operator %s, not In", req.Key, req.Operator)
		}
		if len(req.Values) != 1 {
			return nil, fmt.Errorf("requirement on %q has %d values, not one", req.Key, len(req.Values))
		}
		if _, dup := labels[req.Key]; dup {
			return nil, fmt.Errorf("term names %q twice", req.Key)
		}
		labels[req.Key] = req.Values[0]
	}
	return NewSegment(labels), nil
}
