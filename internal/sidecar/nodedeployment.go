package sidecar

import (
	"context"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/capacity"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/classparams"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/inflight"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/nodedeployment"
)

// nodeInfo is the driver's Node service, which describes the node a sidecar
// of --node-deployment runs on.
type nodeInfo interface {
	NodeGetInfo(ctx context.Context) (*csi.NodeGetInfoResponse, error)
}

// localNode returns the node this sidecar runs on as its driver describes
// it (NodeGetInfo, bounded by --timeout), or nil without --node-deployment.
// As upstream, a driver that cannot tell is a start-up error.
func localNode(ctx context.Context, opts *Options, driver nodeInfo) (*nodedeployment.Local, error) {
	if !opts.NodeDeployment.Enabled {
		return nil, nil
	}
	info, err := driver.NodeGetInfo(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the node's topology from the CSI driver (--node-deployment): %w", err)
	}
	local := nodedeployment.NewLocal(opts.NodeDeployment.NodeName, info)
	klog.FromContext(ctx).Info("Provisioning for this node only (--node-deployment), with the driver's local topology",
		"node", local.Name, "nodeID", local.NodeID, "segment", local.Segment)
	if opts.LeaderElection.Enabled {
		// Upstream does not refuse it either; with one Lease for all nodes,
		// only the leader's node would get volumes.
		klog.FromContext(ctx).Error(nil, "--leader-election with --node-deployment: only the node holding the Lease provisions; run the per-node sidecars without leader election")
	}
	return &local, nil
}

// newNodeDeployment returns the node checks of --node-deployment, wired as
// internal/sidecar/nodedeployment's documentation says, or nil (which allows
// everything) without it. It watches the claim informer the controller
// library runs, unfiltered: a node must see claims without a selected node,
// and another node winning one.
func newNodeDeployment(cfg buildConfig, f *informerSet) (*nodedeployment.Deployment, error) {
	local := cfg.identity.node
	if local == nil {
		return nil, nil
	}
	opts := cfg.opts.NodeDeployment
	topologyAware := cfg.identity.caps.AccessibilityConstraints
	d, err := nodedeployment.New(nodedeployment.Config{Node: *local, TopologyAware: topologyAware, Client: cfg.kube,
		Claims: f.factory.Core().V1().PersistentVolumeClaims().Lister(), Classes: f.factory.Storage().V1().StorageClasses().Lister(),
		ImmediateBinding: opts.ImmediateBinding, BaseDelay: opts.BaseDelay, MaxDelay: opts.MaxDelay,
		Capacity: nodeCapacity(cfg.driver, *local, topologyAware)})
	if err != nil {
		return nil, fmt.Errorf("--node-deployment: %w", err)
	}
	if _, err := f.claims.AddEventHandler(d.ClaimHandler()); err != nil {
		return nil, err
	}
	return d, nil
}

// topologyListers are the Node and CSINode listers the provisioner reads
// topology from. With --node-deployment they hold only this node, as the
// driver describes it, and never change: upstream does the same ("Avoid
// watching in favor of fake, static objects"), so no node watches every
// Node of the cluster. Otherwise they are the shared informers'.
func topologyListers(cfg buildConfig, factory informers.SharedInformerFactory) (corelisters.NodeLister, storagelisters.CSINodeLister) {
	if local := cfg.identity.node; local != nil {
		return local.Listers(cfg.identity.name)
	}
	return factory.Core().V1().Nodes().Lister(), factory.Storage().V1().CSINodes().Lister()
}

// provisionerIdentity is the identity PVs carry: with --node-deployment,
// suffixed with the node's name, as upstream.
func provisionerIdentity(identity string, local *nodedeployment.Local) string {
	if local == nil {
		return identity
	}
	return identity + "-" + local.Name
}

// nodeCapacity is the capacity check a node makes before it claims an
// immediately bound claim: upstream's checkCapacity, a GetCapacity with the
// class's driver parameters for each segment the volume could be created
// in here (this node's, for a topology-aware driver; else one call without
// topology), compared with the claim's request.
//
// Upstream sends the whole CreateVolume request's parameters and volume
// capabilities. The request is built in internal/sidecar/provisioner, which does not
// export it; this sends the class's driver parameters (without
// --extra-create-metadata's) and no volume capabilities, which CSI defines
// as "capacity for any capabilities".
func nodeCapacity(driver capacity.CSIClient, local nodedeployment.Local, topologyAware bool) nodedeployment.CapacityFunc {
	var requisite []*csi.Topology
	if topologyAware && len(local.Segment) > 0 {
		requisite = []*csi.Topology{{Segments: local.Segment}}
	}
	return func(ctx context.Context, claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass) (bool, error) {
		if class == nil {
			return false, fmt.Errorf("PVC %s: no StorageClass to ask for capacity", klog.KObj(claim))
		}
		params, err := classparams.DriverParameters(class.Parameters)
		if err != nil {
			return false, err
		}
		return nodedeployment.HasCapacity(ctx, claimsource.RequestedBytes(claim), requisite, func(ctx context.Context, segment *csi.Topology) (int64, error) {
			resp, err := driver.GetCapacity(ctx, &csi.GetCapacityRequest{Parameters: params, AccessibleTopology: segment})
			return resp.GetAvailableCapacity(), err
		})
	}
}

// withNodeChecks wraps p with the node checks of d, or returns p when d is
// nil (no --node-deployment).
func withNodeChecks(p libProvisioner, d *nodedeployment.Deployment, attempts *inflight.Registry) libProvisioner {
	if d == nil {
		return p
	}
	return nodeChecks{libProvisioner: p, node: d, inFlight: attempts}
}

// nodeChecks puts the checks of --node-deployment where internal/sidecar/nodedeployment
// says they go: a node provisions only the claims assigned to it (claiming
// immediately bound ones first) and deletes only the volumes on it. An
// attempt whose CreateVolume was already sent is finished or undone
// whatever the node.
type nodeChecks struct {
	libProvisioner
	node     *nodedeployment.Deployment
	inFlight *inflight.Registry
}

// ShouldProvision asks the node only about claims the provisioner would
// take, so that no node claims another driver's claim; it may block up to
// --node-deployment-max-delay in a worker, as upstream.
func (p nodeChecks) ShouldProvision(ctx context.Context, claim *v1.PersistentVolumeClaim) bool {
	if !p.libProvisioner.ShouldProvision(ctx, claim) {
		return false
	}
	if p.inFlight.Get(claim.UID) != nil {
		return true
	}
	return p.node.ShouldProvision(ctx, claim, nil)
}

// Provision checks the node again before a new CreateVolume: the check in
// ShouldProvision may have failed, and only its failure is reported here,
// as an event.
func (p nodeChecks) Provision(ctx context.Context, opts controller.ProvisionOptions) (*v1.PersistentVolume, controller.ProvisioningState, error) {
	if p.inFlight.Get(opts.PVC.UID) == nil {
		if err := p.node.CheckProvision(ctx, opts.PVC, opts.StorageClass); err != nil {
			return nil, controller.ProvisioningNoChange, err
		}
	}
	return p.libProvisioner.Provision(ctx, opts)
}

// Delete leaves a volume on another node to that node's sidecar.
func (p nodeChecks) Delete(ctx context.Context, pv *v1.PersistentVolume) error {
	if err := p.node.CheckDelete(pv); err != nil {
		return err
	}
	return p.libProvisioner.Delete(ctx, pv)
}
