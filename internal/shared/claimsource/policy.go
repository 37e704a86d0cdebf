package claimsource

import (
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// GrantChecker decides from a cache whether a ReferenceGrant allows a
// reference.
type GrantChecker interface {
	Check(ref referencegrant.Reference) referencegrant.Decision
}

// SnapshotReader reads VolumeSnapshots and VolumeSnapshotContents from
// informer caches. Absent objects are (nil, nil); an error means the cache
// cannot be read (API not served, no permission, not synced).
type SnapshotReader interface {
	GetSnapshot(namespace, name string) (*snapv1.VolumeSnapshot, error)
	GetContent(name string) (*snapv1.VolumeSnapshotContent, error)
}

// LinkReader reads VolumeSnapshotLinks from an informer cache, like
// SnapshotReader.
type LinkReader interface {
	GetLink(namespace, name string) (*snapv1alpha1.VolumeSnapshotLink, error)
}

// Policy gathers the decision's input for a claim from the sidecar's
// settings and caches. It reads caches only and changes nothing.
type Policy struct {
	// CrossNamespace is the CrossNamespaceSourceProvisioning feature gate.
	CrossNamespace bool
	// Grants checks ReferenceGrants from a cache.
	Grants GrantChecker
	// SnapshotLinks is the --cross-namespace-snapshot flag; Links reads
	// the VolumeSnapshotLinks when it is on.
	SnapshotLinks bool
	Links         LinkReader
	// Driver is what the CSI driver can do.
	Driver Driver
	// Snapshots, Claims and Volumes are the caches of the source objects;
	// only Decide reads them.
	Snapshots SnapshotReader
	Claims    corelisters.PersistentVolumeClaimLister
	Volumes   corelisters.PersistentVolumeLister
	// Order orders a claim against its source's deletion request within
	// their shared second; nil orders by timestamps alone. Decide and
	// sourceuse read it alike, so a claim refused does not hold a source.
	Order datasource.DeletionOrder
}

// Admit resolves the claim's source and runs the claim-level part of the
// decision (see the package Admit). A claim whose source fields cannot be
// resolved returns the resolution error.
func (p Policy) Admit(claim *v1.PersistentVolumeClaim) (datasource.Source, Verdict, error) {
	in, err := p.admission(claim)
	if err != nil {
		return in.Source, Verdict{}, err
	}
	return in.Source, Admit(in), nil
}

// Decide resolves the claim's source, gathers the source objects and runs
// the whole decision (see the package Decide) for a claim provisioned with
// the StorageClass className.
func (p Policy) Decide(claim *v1.PersistentVolumeClaim, className string) (datasource.Source, Verdict, error) {
	in, err := p.Gather(claim, className)
	if err != nil {
		return in.Source, Verdict{}, err
	}
	return in.Source, Decide(in), nil
}

// CrossesNamespaces reports whether a claim with source src is provisioned
// across namespaces: its dataSourceRef names another namespace, or it
// names a VolumeSnapshotLink (when --cross-namespace-snapshot is on) whose
// snapshot is in another namespace. For metrics; it reads the link cache.
func (p Policy) CrossesNamespaces(src datasource.Source) bool {
	if src.Type() != datasource.Link || !p.SnapshotLinks {
		return src.NeedsGrant()
	}
	link, _ := p.Links.GetLink(src.Namespace, src.Name)
	return link != nil && LinkTarget(link).Namespace != link.Namespace
}

// Gather fills the decision's input for the claim from the caches.
func (p Policy) Gather(claim *v1.PersistentVolumeClaim, className string) (Input, error) {
	in, err := p.admission(claim)
	admitted := Admit(in)
	if err != nil || admitted.Action != Provision {
		return in, err // the source objects would not be read
	}
	in.ClassName, in.Driver, in.Order = className, p.Driver, p.Order
	switch src := admitted.Uses; src.Type() {
	case datasource.Snapshot:
		if in.Snapshot, in.Unreadable = p.Snapshots.GetSnapshot(src.Namespace, src.Name); in.Unreadable != nil {
			break
		}
		if s := in.Snapshot; s != nil && s.Status != nil && s.Status.BoundVolumeSnapshotContentName != nil {
			in.Content, in.Unreadable = p.Snapshots.GetContent(*s.Status.BoundVolumeSnapshotContentName)
		}
	case datasource.Claim:
		if in.SourceClaim, in.Unreadable = absentIsNil(p.Claims.PersistentVolumeClaims(src.Namespace).Get(src.Name)); in.Unreadable != nil {
			break
		}
		if c := in.SourceClaim; c != nil && c.Spec.VolumeName != "" {
			in.SourceVolume, in.Unreadable = absentIsNil(p.Volumes.Get(c.Spec.VolumeName))
		}
	}
	return in, nil
}

// admission is the input of Admit: the source and, when it needs one, the
// grant decision.
func (p Policy) admission(claim *v1.PersistentVolumeClaim) (Input, error) {
	src, err := datasource.Resolve(claim)
	if err != nil {
		return Input{Claim: claim, Source: src}, err
	}
	in := Input{Claim: claim, Source: src, CrossNamespace: p.CrossNamespace, SnapshotLinks: p.SnapshotLinks}
	switch {
	case src.Type() == datasource.Link:
		if !p.SnapshotLinks || src.NeedsGrant() {
			break
		}
		if in.Link, in.LinkUnreadable = p.Links.GetLink(src.Namespace, src.Name); in.Link == nil {
			break
		}
		if target := LinkTarget(in.Link); target.Namespace != in.Link.Namespace {
			in.Grant = p.Grants.Check(referencegrant.LinkReference(in.Link.Namespace, target.Namespace, target.Name))
		}
	case src.NeedsGrant() && p.CrossNamespace:
		in.Grant = p.Grants.Check(referencegrant.ClaimReference(claim.Namespace, src.APIGroup, src.Kind, src.Namespace, src.Name))
	}
	return in, nil
}

// absentIsNil turns a lister's NotFound into an absent object.
func absentIsNil[T any](obj *T, err error) (*T, error) {
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}
