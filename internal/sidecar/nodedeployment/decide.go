package nodedeployment

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/xns-csi/csi-provisioner/internal/sidecar/topology"
)

// AnnSelectedNode is the annotation through which a claim is assigned to a
// node: the scheduler sets it for WaitForFirstConsumer classes, a node's
// sidecar sets it to its own node when it claims an immediately bound claim.
// The controller library removes it to reschedule after a final error.
const AnnSelectedNode = "volume.kubernetes.io/selected-node"

// Action is what a node's sidecar does with a claim of its driver.
type Action string

const (
	// Provision means the claim is assigned to this node; provision it here.
	Provision Action = "Provision"
	// Ignore means the claim is not this node's, now or (as far as this node
	// can tell) later; leave it without an event.
	Ignore Action = "Ignore"
	// Claim means the claim is immediately bound, no node is selected yet, and
	// this node can serve it: after a delay, try to become its owner by
	// setting the selected-node annotation to this node.
	Claim Action = "Claim"
)

// Reason is the cause of a decision, a stable CamelCase word for logs.
type Reason string

// The reasons Decide gives, one per branch.
const (
	// ReasonSelectedHere: the claim's selected node is this node.
	ReasonSelectedHere Reason = "SelectedNodeIsThisNode"
	// ReasonSelectedElsewhere: another node is selected; that node's
	// sidecar provisions the claim.
	ReasonSelectedElsewhere Reason = "SelectedNodeIsAnotherNode"
	// ReasonWaitingForScheduler: the class binds late (or names no binding
	// mode) and no node is selected yet: the scheduler will select one.
	ReasonWaitingForScheduler Reason = "WaitingForSelectedNode"
	// ReasonImmediateBindingDisabled: the class binds immediately but
	// --node-deployment-immediate-binding=false; some other controller is
	// expected to select a node.
	ReasonImmediateBindingDisabled Reason = "ImmediateBindingDisabled"
	// ReasonTopologyMismatch: the class's allowedTopologies exclude this
	// node's topology, so a volume created here would be useless.
	ReasonTopologyMismatch Reason = "AllowedTopologiesExcludeThisNode"
	// ReasonUnclaimed: immediately bound, no node selected, and this node
	// can serve it.
	ReasonUnclaimed Reason = "NoSelectedNode"
)

// Input is everything Decide looks at.
type Input struct {
	// Node is this node's name (NODE_NAME).
	Node string
	// SelectedNode is the claim's selected-node annotation ("" if none):
	// SelectedNode(claim).
	SelectedNode string
	// Class is the claim's StorageClass. Only read when no node is
	// selected; nil then means the binding mode is unknown, which is
	// treated as late binding.
	Class *storagev1.StorageClass
	// ImmediateBinding is --node-deployment-immediate-binding.
	ImmediateBinding bool
	// Topology is this node as its driver describes it, nil when the driver
	// is not topology-aware (no VOLUME_ACCESSIBILITY_CONSTRAINTS): then
	// allowedTopologies are not checked, as upstream.
	Topology *Local
}

// Decision is Decide's answer.
type Decision struct {
	Action  Action
	Reason  Reason
	Message string
}

// SelectedNode returns the node a claim is assigned to, "" if none.
func SelectedNode(claim *v1.PersistentVolumeClaim) string {
	return claim.Annotations[AnnSelectedNode]
}

// Decide tells whether this node provisions a claim of its driver, leaves
// it, or tries to claim it. It is upstream's checkNode without the I/O: a
// selected node decides alone; without one, only an immediately bound
// class, with immediate binding enabled and (for a topology-aware driver)
// allowedTopologies that admit this node, lets the node try.
func Decide(in Input) Decision {
	switch in.SelectedNode {
	case in.Node:
		return Decision{Provision, ReasonSelectedHere, fmt.Sprintf("the claim is assigned to this node %q", in.Node)}
	case "":
	default:
		return Decision{Ignore, ReasonSelectedElsewhere, fmt.Sprintf("the claim is assigned to node %q, not to this node %q", in.SelectedNode, in.Node)}
	}
	if in.Class == nil || in.Class.VolumeBindingMode == nil || *in.Class.VolumeBindingMode != storagev1.VolumeBindingImmediate {
		return Decision{Ignore, ReasonWaitingForScheduler, "no node is selected yet and the StorageClass does not bind immediately: waiting for the scheduler"}
	}
	if !in.ImmediateBinding {
		return Decision{Ignore, ReasonImmediateBindingDisabled, "the StorageClass binds immediately but --node-deployment-immediate-binding is off: waiting for another controller to select a node"}
	}
	if err := servesTopology(in.Class.AllowedTopologies, in.Topology); err != nil {
		return Decision{Ignore, ReasonTopologyMismatch, fmt.Sprintf("this node %q cannot serve the StorageClass: %v", in.Node, err)}
	}
	return Decision{Claim, ReasonUnclaimed, fmt.Sprintf("no node is selected yet and this node %q can serve the StorageClass", in.Node)}
}

// servesTopology reports (as an error) whether a volume created on the node
// could satisfy allowedTopologies. Upstream tries to build the CreateVolume
// topology requirement with this node as the selected node, from this
// node's topology alone, and gives up when that fails; so does this, with
// internal/sidecar/topology's rule. Strictness does not matter here: either way the
// node's segment must lie within an allowed term, so the check runs
// non-strict.
func servesTopology(allowed []v1.TopologySelectorTerm, node *Local) error {
	if len(allowed) == 0 || node == nil {
		return nil
	}
	selected := &topology.SelectedNode{Name: node.Name, Keys: node.keys(), Labels: node.Segment}
	_, err := topology.Requirement(topology.Input{AllowedTopologies: allowed, Selected: selected,
		Nodes: []topology.Node{{Name: node.Name, Keys: node.keys(), Labels: node.Segment}}})
	return err
}
