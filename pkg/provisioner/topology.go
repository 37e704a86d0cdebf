package provisioner

import (
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"

	"github.com/xns-csi/csi-provisioner/pkg/topology"
)

// topologyRequirement gathers node topology from the caches and computes the
// requirement; nil when the driver is not topology-aware.
func (p *Provisioner) topologyRequirement(opts controller.ProvisionOptions) (*csi.TopologyRequirement, error) {
	if !p.caps.AccessibilityConstraints {
		return nil, nil
	}
	csiNodes, err := p.csiNodes.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	in := topology.Input{AllowedTopologies: opts.StorageClass.AllowedTopologies,
		Strict: p.opts.StrictTopology, Immediate: p.opts.ImmediateTopology}
	for _, cn := range csiNodes {
		keys := p.topologyKeys(cn.Spec.Drivers)
		if keys == nil {
			continue
		}
		node, err := p.nodes.Get(cn.Name)
		if err != nil {
			continue // CSINode of a node that is gone
		}
		n := topology.Node{Name: node.Name, Segment: topology.SegmentOf(node.Labels, keys)}
		in.Nodes = append(in.Nodes, n)
		if node.Name == opts.SelectedNodeName {
			in.SelectedNode = &n
		}
	}
	if opts.SelectedNodeName != "" && in.SelectedNode == nil {
		return nil, fmt.Errorf("selected node %q has no CSINode entry for driver %q yet: is the driver's node plugin running there?", opts.SelectedNodeName, p.driverName)
	}
	return topology.Requirement(in)
}

// topologyKeys returns this driver's topology keys from a CSINode, nil when
// the driver is not registered there.
func (p *Provisioner) topologyKeys(drivers []storagev1.CSINodeDriver) []string {
	for _, d := range drivers {
		if d.Name == p.driverName {
			if d.TopologyKeys == nil {
				return []string{}
			}
			return d.TopologyKeys
		}
	}
	return nil
}
