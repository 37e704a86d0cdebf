// Package claimsource is the one decision about whether this provisioner
// may provision a claim from its data source now: provision it (and from
// what), leave it to another component, or refuse it and say why.
// Provisioning, the filter that runs before it and source protection all ask
// this package, so that "this claim uses that source" means the same thing
// everywhere, and a new source kind is taught in one place.
//
// The decision is one ordered chain over one Input value:
//
//	populator → same namespace? → gate → grant             (Admit)
//	          → driver capability → snapshot or clone checks (Decide)
//
// Across namespaces the grant admits a VolumeSnapshot (KEP-3294) or a
// PersistentVolumeClaim to clone (as the upstream provisioner v6.4.0 does);
// the clone checks are then the same as within a namespace.
//
// A VolumeSnapshotLink (KEP-3294's alternative) is one more kind in the
// same chain: Admit resolves the link to its VolumeSnapshot and checks the
// link's grant; Decide then checks that snapshot as any other.
//
// Admit and Decide are pure. Policy gathers their Input from the sidecar's
// settings and informer caches and calls them.
package claimsource

import (
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// Action is what the provisioner does with a claim's source.
type Action int

const (
	// Provision means the claim may be provisioned from its source: by
	// Admit, once the source itself is usable; by Decide, now.
	Provision Action = iota
	// LeaveAlone means the claim is not this provisioner's to provision:
	// a volume populator fills it, or cross-namespace sources are off.
	LeaveAlone
	// Refuse means the claim cannot be provisioned from its source until
	// something changes (a grant appears, the snapshot becomes ready).
	Refuse
)

// Driver is what the CSI driver can do with a source.
type Driver struct {
	// Name is the CSI driver's name: sources of other drivers are refused.
	Name string
	// RestoresSnapshots is the CREATE_DELETE_SNAPSHOT capability.
	RestoresSnapshots bool
	// Clones is the CLONE_VOLUME capability.
	Clones bool
	// PreventVolumeModeConversion refuses restoring a snapshot with another
	// volume mode than its source had, unless its content allows it
	// (--prevent-volume-mode-conversion).
	PreventVolumeModeConversion bool
}

// Input is everything the decision reads.
type Input struct {
	// Claim is the claim being provisioned.
	Claim *v1.PersistentVolumeClaim
	// ClassName is the StorageClass the claim is provisioned with.
	ClassName string
	// Source is the claim's resolved data source.
	Source datasource.Source
	// CrossNamespace is the CrossNamespaceSourceProvisioning feature gate.
	CrossNamespace bool
	// Grant is the ReferenceGrant decision for the claim's reference, or
	// for its VolumeSnapshotLink's; read only when one is needed.
	Grant referencegrant.Decision
	// SnapshotLinks is the --cross-namespace-snapshot flag: restore through
	// VolumeSnapshotLinks. Off, a link is a populator's kind.
	SnapshotLinks bool
	// Link is the VolumeSnapshotLink the claim names, nil when absent;
	// LinkUnreadable says why the link cache could not be read.
	Link           *snapv1alpha1.VolumeSnapshotLink
	LinkUnreadable error
	// Driver is what the driver can do; read by Decide only.
	Driver Driver

	// The source objects from the caches, read by Decide only; nil when
	// absent. Snapshot and Content for a snapshot source (Content is the one
	// the snapshot is bound to), SourceClaim and SourceVolume (the PV it is
	// bound to) for a clone.
	Snapshot     *snapv1.VolumeSnapshot
	Content      *snapv1.VolumeSnapshotContent
	SourceClaim  *v1.PersistentVolumeClaim
	SourceVolume *v1.PersistentVolume
	// Unreadable says why a cache the source's checks need could not be
	// read (API not served, no permission); nil when it could.
	Unreadable error
	// Order orders the claim against a source's deletion request in the
	// same second (datasource.ServesDespiteDeletion); nil when none does.
	Order datasource.DeletionOrder
}

// Verdict is the outcome of the decision.
type Verdict struct {
	// Action is what to do with the claim.
	Action Action
	// Reason is the cause, Allowed when the claim may be provisioned.
	Reason Reason
	// Message tells the claim's owner what is missing and what to do.
	Message string
	// Content is what CreateVolume fills the volume from: set by Decide
	// when the claim has a snapshot or clone source and may be provisioned.
	Content *csi.VolumeContentSource
	// Uses is the object the volume is made from, which source protection
	// guards, and how the claim names it (each use has its finalizer):
	// the claim's source, or the VolumeSnapshot its VolumeSnapshotLink
	// names. Set when Action is Provision.
	Uses datasource.Source
}

// HoldsSource reports whether a pending claim with this Admit verdict keeps
// its source protected from deletion: it will be provisioned from it, or the
// grant cache cannot tell now (fail safe: keep the data). A claim refused
// for good, or whose grant is missing, does not, so that nobody can keep
// another namespace's snapshot or claim from being deleted by naming it.
func (v Verdict) HoldsSource() bool {
	return v.Action == Provision || v.Reason == ReasonGrantUnavailable
}

// Admit runs the claim-level part of the chain: populator → dropped
// reference → gate → grant. It does not look at the source object itself,
// so it answers whether the claim may use its source at all, not whether it
// can now. Across namespaces, a VolumeSnapshot (KEP-3294) and a
// PersistentVolumeClaim to clone (as the upstream provisioner v6.4.0 allows)
// are both admitted by a ReferenceGrant in the source's namespace; other
// kinds are a populator's, and a VolumeSnapshotLink must be local.
func Admit(in Input) Verdict {
	src := in.Source
	switch {
	case src.Type() == datasource.Link && in.SnapshotLinks:
		return admitLink(in)
	case src.Type() == datasource.Populator || src.Type() == datasource.Link:
		return Verdict{Action: LeaveAlone, Reason: ReasonWaitingForPopulator, Message: fmt.Sprintf(
			"the data source %s is not a VolumeSnapshot or PersistentVolumeClaim; waiting for its volume populator to fill the volume", src)}
	case src.Type() == datasource.None && in.Claim != nil && datasource.RefDropped(in.Claim):
		return Verdict{Action: LeaveAlone, Reason: ReasonDataSourceRefDropped, Message: "spec.dataSourceRef was set when the claim " +
			"was created (its managed fields record it), but the API server dropped it: a dataSourceRef naming a namespace needs " +
			"the alpha feature gate CrossNamespaceVolumeDataSource on kube-apiserver and kube-controller-manager. The claim is not " +
			"provisioned, so that it does not get an empty volume; delete it and restore through a VolumeSnapshotLink instead"}
	case !src.NeedsGrant():
		return allowed(src, "")
	case !in.CrossNamespace:
		return Verdict{Action: LeaveAlone, Reason: ReasonCrossNamespaceDisabled, Message: fmt.Sprintf(
			"spec.dataSourceRef.namespace names %s, but the provisioner's CrossNamespaceSourceProvisioning feature gate is off; the claim is not provisioned", src)}
	}
	// A VolumeSnapshot or, as in the upstream provisioner v6.4.0, a
	// PersistentVolumeClaim to clone: the grant in its namespace decides.
	return admitGrant(in.Grant, src)
}

// admitLink resolves a VolumeSnapshotLink to its VolumeSnapshot: a link
// must be in the claim's namespace, exist, and, naming a snapshot in
// another namespace, be allowed by a grant there.
func admitLink(in Input) Verdict {
	src := in.Source
	switch {
	case src.NeedsGrant():
		return refuse(ReasonCrossNamespaceKindUnsupported,
			"%s: a VolumeSnapshotLink must be in the claim's own namespace; it is the link that names the other namespace", src)
	case in.LinkUnreadable != nil:
		return refuse(ReasonLinkAPIUnavailable, "cannot read %s: %v", src, in.LinkUnreadable)
	case in.Link == nil:
		return refuse(ReasonLinkNotFound, "%s does not exist; create it or fix the claim's data source", src)
	}
	target := LinkTarget(in.Link)
	if target.Namespace == in.Link.Namespace {
		return allowed(target, "")
	}
	return admitGrant(in.Grant, target)
}

// admitGrant allows the use of target when the grant decision does.
func admitGrant(grant referencegrant.Decision, target datasource.Source) Verdict {
	switch {
	case grant.Reason == referencegrant.ReasonUnavailable:
		return refuse(ReasonGrantUnavailable, "%s", grant.Message)
	case !grant.Allowed:
		return refuse(ReasonGrantMissing, "%s", grant.Message)
	}
	return allowed(target, grant.Message)
}

// LinkTarget is the VolumeSnapshot a VolumeSnapshotLink names, used
// through the link.
func LinkTarget(link *snapv1alpha1.VolumeSnapshotLink) datasource.Source {
	return datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind,
		Namespace: link.SourceNamespace(), Name: link.Spec.Source.Name, ThroughLink: true}
}

// Decide runs the whole chain: Admit, then whether the driver can use the
// source kind, then the snapshot or clone checks. A claim it allows carries
// the content source for CreateVolume.
func Decide(in Input) Verdict {
	admitted := Admit(in)
	if admitted.Action != Provision {
		return admitted
	}
	var v Verdict
	switch admitted.Uses.Type() {
	case datasource.Snapshot:
		if !in.Driver.RestoresSnapshots {
			return refuse(ReasonSnapshotRestoreUnsupported,
				"CSI driver %q cannot restore snapshots (no CREATE_DELETE_SNAPSHOT capability); remove the data source or use another StorageClass", in.Driver.Name)
		}
		v = checkSnapshot(in, admitted.Uses)
	case datasource.Claim:
		if !in.Driver.Clones {
			return refuse(ReasonCloneUnsupported,
				"CSI driver %q cannot clone volumes (no CLONE_VOLUME capability); remove the data source or use another StorageClass", in.Driver.Name)
		}
		v = checkClone(in)
	default:
		return admitted
	}
	if v.Action == Provision {
		v.Message, v.Uses = admitted.Message, admitted.Uses // the grant that allows it, if any
	}
	return v
}

func allowed(uses datasource.Source, message string) Verdict {
	return Verdict{Action: Provision, Reason: ReasonAllowed, Message: message, Uses: uses}
}

func refuse(reason Reason, format string, args ...any) Verdict {
	return Verdict{Action: Refuse, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// RequestedBytes is the storage a claim requests (0 without a request).
func RequestedBytes(claim *v1.PersistentVolumeClaim) int64 {
	q := claim.Spec.Resources.Requests[v1.ResourceStorage]
	return q.Value()
}

func modeOf(m *v1.PersistentVolumeMode) v1.PersistentVolumeMode {
	if m == nil {
		return v1.PersistentVolumeFilesystem
	}
	return *m
}
