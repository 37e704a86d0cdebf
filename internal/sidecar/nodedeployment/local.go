package nodedeployment

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
)

// Local is the node a sidecar runs on, as its driver describes it. In node
// mode all topology comes from here: upstream derives it "exclusively from
// the information returned by the CSI driver that runs on the same node"
// (its README, Deployment on each node), not from Node and CSINode objects.
type Local struct {
	// Name is the Kubernetes node's name (NODE_NAME).
	Name string
	// NodeID is NodeGetInfo's node_id.
	NodeID string
	// Segment is NodeGetInfo's accessible_topology; nil when the driver
	// reported none.
	Segment map[string]string
}

// NewLocal describes node nodeName from the driver's NodeGetInfo answer.
func NewLocal(nodeName string, info *csi.NodeGetInfoResponse) Local {
	local := Local{Name: nodeName, NodeID: info.GetNodeId()}
	if t := info.GetAccessibleTopology(); t != nil {
		local.Segment = maps.Clone(t.GetSegments())
		if local.Segment == nil {
			local.Segment = map[string]string{}
		}
	}
	return local
}

// keys are the segment's topology keys, sorted; nil without segment.
func (l Local) keys() []string {
	if l.Segment == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(l.Segment))
}

// Node is the Node object the provisioner's topology code reads for this
// node: its labels are the segment, nothing else.
func (l Local) Node() *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: l.Name, Labels: maps.Clone(l.Segment)}}
}

// CSINode is the CSINode object the provisioner's topology code reads for
// this node: driver registered with the node ID and the segment's keys.
func (l Local) CSINode(driverName string) *storagev1.CSINode {
	return &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{Name: l.Name},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
			{Name: driverName, NodeID: l.NodeID, TopologyKeys: l.keys()},
		}},
	}
}

// Listers return a Node and a CSINode lister that hold only Node() and
// CSINode(driverName) and never change. In node mode the sidecar hands
// these to the provisioner instead of informer listers, as upstream does,
// so that topology requirements name this node's segment only and no node
// watches every Node and CSINode of the cluster.
func (l Local) Listers(driverName string) (corelisters.NodeLister, storagelisters.CSINodeLister) {
	nodes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	csiNodes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	// Adding to a fresh indexer only fails for an object without a name,
	// which Node and CSINode always have.
	_ = nodes.Add(l.Node())
	_ = csiNodes.Add(l.CSINode(driverName))
	return corelisters.NewNodeLister(nodes), storagelisters.NewCSINodeLister(csiNodes)
}

// VolumeAccessible reports whether a volume with this node affinity lives
// on the node, i.e. whether this node's sidecar may delete it (upstream:
// "If we run on a single node, then we shouldn't delete volumes that we
// didn't create"). A node whose driver reported no topology, and a volume
// without required affinity, are accessible. Otherwise some term must
// match: its expressions against the segment as node labels, its fields
// against the node's name. An empty term matches nothing. Terms that are
// invalid are skipped; their errors are returned only when no term
// matched.
func VolumeAccessible(affinity *v1.VolumeNodeAffinity, node Local) (bool, error) {
	if node.Segment == nil || affinity == nil || affinity.Required == nil {
		return true, nil
	}
	var errs []error
	for i, term := range affinity.Required.NodeSelectorTerms {
		if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
			continue
		}
		ok, err := termMatches(term, node)
		if err != nil {
			errs = append(errs, fmt.Errorf("nodeSelectorTerms[%d]: %w", i, err))
			continue
		}
		if ok {
			return true, nil
		}
	}
	return false, errors.Join(errs...)
}

var selectorOperators = map[v1.NodeSelectorOperator]selection.Operator{
	v1.NodeSelectorOpIn:           selection.In,
	v1.NodeSelectorOpNotIn:        selection.NotIn,
	v1.NodeSelectorOpExists:       selection.Exists,
	v1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	v1.NodeSelectorOpGt:           selection.GreaterThan,
	v1.NodeSelectorOpLt:           selection.LessThan,
}

// termMatches evaluates one non-empty node selector term, the expressions
// against the node's segment and the fields against its name.
func termMatches(term v1.NodeSelectorTerm, node Local) (bool, error) {
	selector := labels.NewSelector()
	for _, expr := range term.MatchExpressions {
		op, ok := selectorOperators[expr.Operator]
		if !ok {
			return false, fmt.Errorf("unsupported operator %q in matchExpressions", expr.Operator)
		}
		req, err := labels.NewRequirement(expr.Key, op, expr.Values)
		if err != nil {
			return false, err
		}
		selector = selector.Add(*req)
	}
	matches := selector.Matches(labels.Set(node.Segment))
	for _, f := range term.MatchFields {
		if len(f.Values) != 1 || (f.Operator != v1.NodeSelectorOpIn && f.Operator != v1.NodeSelectorOpNotIn) {
			return false, fmt.Errorf("matchFields %q: only In and NotIn with one value are supported", f.Key)
		}
		value := "" // a node has no selectable field but its name
		if f.Key == "metadata.name" {
			value = node.Name
		}
		if (f.Values[0] == value) != (f.Operator == v1.NodeSelectorOpIn) {
			matches = false
		}
	}
	return matches, nil
}
