package provisioner

import (
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"

	"github.com/xns-csi/csi-provisioner/internal/sidecar/topology"
)

// topologyRequirement gathers the driver's topology keys and the nodes'
// labels from the caches and computes the requirement; nil when the driver
// is not topology-aware. As upstream, a selected node without a CSINode
// sends the claim back to the scheduler (ProvisioningReschedule); any other
// error leaves the state unchanged.
func (p *Provisioner) topologyRequirement(opts controller.ProvisionOptions) (*csi.TopologyRequirement, controller.ProvisioningState, error) {
	if !p.caps.AccessibilityConstraints {
		return nil, "", nil
	}
	in, err := p.topologyInput(opts)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, controller.ProvisioningReschedule, err
		}
		return nil, controller.ProvisioningNoChange, err
	}
	req, err := topology.Requirement(in)
	if err != nil {
		return nil, controller.ProvisioningNoChange, fmt.Errorf("error generating accessibility requirements: %w", err)
	}
	return req, "", nil
}

// topologyInput reads what topology.Requirement needs from the caches: the
// selected node, and every node whose CSINode lists the driver, with the
// keys registered there. Their order does not matter: the requirement is
// sorted, so every retry of a claim computes the same one.
func (p *Provisioner) topologyInput(opts controller.ProvisionOptions) (topology.Input, error) {
	in := topology.Input{AllowedTopologies: opts.StorageClass.AllowedTopologies, ClaimName: opts.PVC.Name,
		Strict: p.opts.StrictTopology, Immediate: p.opts.ImmediateTopology}
	if name := opts.SelectedNodeName; name != "" {
		csiNode, err := p.csiNodes.Get(name)
		if err != nil {
			return in, fmt.Errorf("failed to get selected CSINode %s: %w", name, err)
		}
		in.Selected = &topology.SelectedNode{Name: name, Keys: p.topologyKeys(csiNode)}
		if node, err := p.nodes.Get(name); err == nil {
			in.Selected.Labels = node.Labels
		}
	}
	csiNodes, err := p.csiNodes.List(labels.Everything())
	if err != nil {
		return in, fmt.Errorf("error listing CSINodes: %w", err)
	}
	for _, cn := range csiNodes {
		keys := p.topologyKeys(cn)
		if len(keys) == 0 {
			continue
		}
		n := topology.Node{Name: cn.Name, Keys: keys}
		if node, err := p.nodes.Get(cn.Name); err == nil {
			n.Labels = node.Labels
		}
		in.Nodes = append(in.Nodes, n)
	}
	return in, nil
}

// topologyKeys returns this driver's topology keys in a CSINode, nil when
// the driver is not registered there or reports none.
func (p *Provisioner) topologyKeys(csiNode *storagev1.CSINode) []string {
	for _, d := range csiNode.Spec.Drivers {
		if d.Name == p.driverName {
			return d.TopologyKeys
		}
	}
	return nil
}
