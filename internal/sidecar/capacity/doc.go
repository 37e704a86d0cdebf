// Package capacity publishes the driver's storage capacity as
// CSIStorageCapacity objects for the scheduler (KEP-1472, "with central
// controller"), as the upstream external-provisioner v6.4.0 does with
// --enable-capacity.
//
// # What it keeps
//
// One object per storage class of the driver and topology segment. The
// classes are those whose provisioner is the driver and that bind with
// WaitForFirstConsumer (all of them with Config.ImmediateBinding). A segment
// is the set of topology labels that nodes running the driver share: for
// every CSINode listing the driver, the Node's labels for the driver's
// topology keys (Segments). A node that lacks one of those labels does not
// count yet; a driver without topology keys has one empty segment, spanning
// all nodes. Each object is created in Config.Namespace with a generated
// name ("csisc-"), the labels DriverNameLabel and ManagedByLabel, the
// class's name, the segment as matchLabels of its nodeTopology, the
// capacity and maximum volume size that GetCapacity reported for the
// class's parameters (all of them, as upstream sends them) and the segment
// as accessible topology, and Config.Owner as controller reference.
// Objects of classes or segments that are gone are deleted; objects without
// both labels are never touched.
//
// GetCapacity is asked for every object each Config.PollInterval, and at
// once when a class of the driver is added or changed, when a segment
// appears (a node's labels, or the driver's topology keys on a node,
// change), and when RefreshClass or RefreshTopology ask for it. An object
// that someone else changed or deleted is restored from the last answer,
// without asking the driver again.
//
// # How it is built
//
// Deciding is pure: Segments derives the segments, Plan compares the
// desired objects with the existing ones and the driver's answers and
// returns the creates, updates and deletes (each delete with its reason).
// The Controller gathers the input from informer caches, asks GetCapacity
// through CSIClient, and applies one key's plan at a time in its
// workers; see Controller.
//
// # What the sidecar wires (internal/sidecar), when --enable-capacity is set
//
//   - Client: a clientset of its own, from the sidecar's rest.Config with
//     QPS --kube-api-capacity-qps (default 1) and Burst
//     --kube-api-capacity-burst (default 5).
//   - Owner: owner.Lookup(ctx, client, NAMESPACE, POD_NAME,
//     --capacity-ownerref-level) (default 1; -1 gives nil, no owner, and
//     needs no POD_NAME). Log the result, as upstream does.
//   - DriverName: the name GetPluginInfo reports. Namespace: NAMESPACE.
//     ImmediateBinding: --capacity-for-immediate-binding. PollInterval:
//     --capacity-poll-interval (default 1m). RetryIntervalStart and
//     RetryIntervalMax: --retry-interval-start and --retry-interval-max.
//     ResyncPeriod: --resync-period (upstream resyncs this informer hourly).
//   - StorageClasses, Nodes, CSINodes: from the sidecar's informer factory,
//     started after New.
//   - With --node-deployment: ManagedBy ManagedByForNode(NODE_NAME),
//     FixedSegment the segment of NodeGetInfo's accessible topology
//     (NewSegment), and no Nodes or CSINodes. Otherwise ManagedBy stays
//     empty (DefaultManagedBy, "external-provisioner").
//   - CSI: the sidecar's CSI client, whose GetCapacity is bounded by
//     --timeout like its other calls.
//   - Registerer: the registry served on --metrics-path. The gauges are
//     upstream's: csistoragecapacities_desired_goal,
//     csistoragecapacities_desired_current and csistoragecapacities_obsolete;
//     the work queue is named "csistoragecapacity" in the workqueue_*
//     metrics.
//   - Run(ctx, --capacity-threads) once, while leader (upstream runs it in
//     the leader's callback); it returns after its workers stopped.
//   - After provisioning, as upstream's provision wrapper: a volume
//     provisioned with a node affinity calls RefreshTopology with it, one
//     without calls RefreshClass with its class, and a failed attempt
//     (state other than ProvisioningNoChange) calls RefreshClass; a deleted
//     volume with a node affinity calls RefreshTopology.
//
// RBAC, verb by verb:
//   - csistoragecapacities (storage.k8s.io), in NAMESPACE (a Role): list
//     and watch (the controller's informer), create, update and delete.
//     Upstream's example also grants get and patch, which are not used.
//   - storageclasses (storage.k8s.io): list and watch (cluster-wide, as
//     provisioning needs them anyway).
//   - nodes (core) and csinodes (storage.k8s.io): list and watch
//     (cluster-wide); not needed with --node-deployment.
//   - for the owner, in NAMESPACE: get on pods at level 0 and up; at level
//     n, also get on the owners below level n: replicasets (apps) for
//     level 2, the usual Deployment. The owner at the level itself is not
//     read. Discovery (/api, /apis) is read too, which every authenticated
//     user may.
//
// # Where it differs from upstream
//
// Only where upstream fails or does needless work (the v1 API only, with no
// fallback to v1beta1, is as upstream since v6.4.0): a controller
// reference of another owner (e.g. of an earlier deployment) is replaced
// rather than a second one appended, which the API server would reject;
// of duplicate objects the oldest stays; and the controller trusts its own
// writes until its cache has caught up, so it neither creates an object
// twice nor updates from a stale version when a key is worked on again
// right away.
package capacity
