// Package nodedeployment is upstream's distributed provisioning
// (--node-deployment): one sidecar per node, next to a CSI driver that
// manages node-local storage, each provisioning and deleting only the
// volumes of its own node.
//
// The rules, as in upstream external-provisioner v6 (controller.go:
// checkNode, becomeOwner, Delete; its README: Deployment on each node):
//
//   - A claim whose selected node (the annotation
//     volume.kubernetes.io/selected-node) is this node is provisioned here;
//     one selected for another node is left alone, without an event.
//   - A claim without a selected node whose class binds late waits for the
//     scheduler. One whose class binds immediately is claimed by some node
//     when --node-deployment-immediate-binding is on (the default): every
//     node that can serve it (the class's allowedTopologies admit its
//     topology, checked only for topology-aware drivers) waits a delay
//     (Delay: up to --node-deployment-base-delay at first, growing with
//     each lost try up to --node-deployment-max-delay), gives up early if
//     its claim cache shows another owner, checks its capacity, and then
//     sets the annotation to itself with an update that fails on any
//     concurrent change. Exactly one node wins; the claim comes back to
//     every node through the informer with the winner's name.
//   - A PV is deleted only by the node whose topology its node affinity
//     admits (VolumeAccessible).
//   - Topology comes only from the local driver (NodeGetInfo): the
//     provisioner reads a Node and a CSINode that describe this node alone
//     (Local.Listers), never the cluster's.
//
// # Wiring (internal/sidecar)
//
// When --node-deployment is set:
//
//  1. Validate NODE_NAME (non-empty) and the delays (0 <= base <= max).
//  2. Call the driver's NodeGetInfo (with --timeout) and build
//     local := NewLocal(NODE_NAME, info).
//  3. New(Config{Node: local, TopologyAware: the driver's
//     VOLUME_ACCESSIBILITY_CONSTRAINTS capability, Client: the sidecar's
//     clientset, Claims: the lister of the claim informer the controller
//     library runs, Classes: the StorageClass lister, ImmediateBinding,
//     BaseDelay, MaxDelay: the three flags, Capacity: the provisioner's
//     capacity check (see below)}), and register d.ClaimHandler() on that
//     same claim informer. The claim informer must not be filtered by
//     node: nodes must see claims without a selected node, and see another
//     node win. Volume and class informers stay as they are.
//  4. Give the provisioner local.Listers(driverName) as its Node and CSINode
//     listers, and do not start Node and CSINode informers for it (upstream
//     does the same: "Avoid watching in favor of fake, static objects").
//  5. Suffix the provisioner identity with "-" + NODE_NAME, as upstream.
//  6. With --enable-capacity: publish capacity for the fixed segment
//     local.Segment (internal/sidecar/capacity's FixedSegment) instead of watching
//     nodes, managed by capacity.ManagedByForNode(NODE_NAME).
//  7. Run without leader election (--leader-election is off by default;
//     upstream does not enforce it either): every node's sidecar must run,
//     and a shared lease would leave all but one node idle.
//
// Without --node-deployment, pass a nil *Deployment: every method then
// allows everything.
//
// # Calls (internal/sidecar's nodeChecks, around the provisioner)
//
//   - ShouldProvision(ctx, claim): after the claim was found to be this
//     driver's (never call it for another driver's claim: it could claim it)
//     and after the check for a CreateVolume in flight (an attempt already
//     sent must be finished or undone whatever the node), return false if
//     d.ShouldProvision(ctx, claim, nil) is false. It can block up to
//     --node-deployment-max-delay in a controller worker, as upstream.
//   - Provision(ctx, opts): before starting a new CreateVolume, if
//     err := d.CheckProvision(ctx, opts.PVC, opts.StorageClass); err != nil,
//     return nil, controller.ProvisioningNoChange, err.
//   - Delete(ctx, pv): before DeleteVolume, if err := d.CheckDelete(pv);
//     err != nil, return err (an IgnoredError when the volume is on
//     another node).
//   - The capacity check given as Config.Capacity calls HasCapacity with
//     the claim's requested bytes, this node's segment as requisite
//     topology (for a topology-aware driver), and a GetCapacity with the
//     class's driver parameters per segment. Upstream sends the parameters
//     and volume capabilities of the whole CreateVolume request the claim
//     would get on this node; internal/sidecar/provisioner does not export that request
//     yet, so the volume capabilities (and --extra-create-metadata's
//     parameters) are not sent.
//
// # API access
//
// On persistentvolumeclaims: get (each claim attempt reads the claim
// afresh) and update (the selected-node annotation), besides the list and
// watch of the claim informer. No access to nodes or csinodes is needed for
// topology in this mode.
package nodedeployment
