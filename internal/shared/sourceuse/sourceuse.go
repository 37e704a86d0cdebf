// Package sourceuse answers "which pending claims would be provisioned from
// this source?" from informer caches. Source protection asks it before it
// releases a source's finalizer, and the snapshot validation webhook's
// DELETE guard asks it before it lets a VolumeSnapshot go, so that both
// mean the same claims: those provisioning (claimsource.Policy.Admit) would
// use the source, found through the claim index of package requeue,
// directly or through VolumeSnapshotLinks.
//
// A source is used in one of three ways, each guarded by its own finalizer
// (datasource.Source.Finalizer): named in the claim's own namespace,
// named with spec.dataSourceRef.namespace, or through a link. The pending
// claims of a use are those that hold its finalizer:
//
//   - a claim naming spec.dataSourceRef.namespace holds the finalizer of
//     such uses, which is this provisioner's own;
//   - every claim naming the source directly, with or without the
//     namespace, holds upstream's shared finalizer: the upstream
//     csi-provisioner protects restores and clones naming a namespace with
//     it too, and a restore begun before this provisioner had finalizers
//     of its own for them still carries it;
//   - a claim naming a VolumeSnapshotLink to a snapshot holds the links'.
//
// Whose settings judge a claim: a claim handed to the provisioner the
// Finder serves (claimsource.ProvisionerOf) is judged by its own Policy, the
// CrossNamespaceSourceProvisioning gate included. A claim of another
// provisioner is judged as if the gate were on: its own sidecar, which may
// have the gate on, decides it, and a sidecar with the gate off must not
// release the protection of another driver's restore across namespaces.
// Its grant still decides, so naming another provisioner in an annotation
// (anyone can write one on their claim) holds a snapshot or claim of
// another namespace only while that namespace's owner allows the
// reference, exactly as a claim of this provisioner would.
package sourceuse

import (
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/requeue"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// LinkIndex finds the VolumeSnapshotLinks that name a snapshot (see
// package linkcache).
type LinkIndex interface {
	LinksTo(namespace, name string) ([]*snapv1alpha1.VolumeSnapshotLink, error)
}

// Finder reads the caches the answer is gathered from.
type Finder struct {
	// Claims is the PVC informer's indexer, with requeue.SourceIndex.
	Claims cache.Indexer
	// Links finds the claims restoring through VolumeSnapshotLinks; nil
	// finds none.
	Links LinkIndex
	// Volumes is the PV lister.
	Volumes corelisters.PersistentVolumeLister
	// VolumeName is the name of the PV the provisioner creates for a claim.
	VolumeName func(*v1.PersistentVolumeClaim) string
	// Policy is provisioning's decision; only its Admit is asked.
	Policy claimsource.Policy
	// Provisioner is the provisioner whose claims Policy judges as it is
	// set; the claims of others are judged with the cross-namespace gate on
	// (see the package comment). Empty, Policy judges every claim as set
	// (the webhook's DELETE guard, set as the sidecars are).
	Provisioner string
}

// Use is a pending claim of a source and provisioning's verdict on it.
type Use struct {
	Claim   *v1.PersistentVolumeClaim
	Verdict claimsource.Verdict
}

// Pending returns the claims that hold src's finalizer (src is one use of
// the object, see the package comment) and are still to be provisioned
// from it, with Admit's verdict on each: not deleted, created (and so was
// the link it names src through) before src's deletion was requested while
// src (obj, as last seen) still carries its finalizer
// (datasource.ServesUseDespiteDeletion), and with no PV yet. A claim
// whose PV the cache cannot rule out, or whose source cannot be resolved,
// is left out. The caller decides which verdicts count
// (Verdict.HoldsSource for protection). The error says that the link cache
// could not be read; the claims found directly are returned with it.
func (f Finder) Pending(src datasource.Source, obj metav1.Object) ([]Use, error) {
	objs, err := f.claimsOf(src)
	var uses []Use
	f.pending(src, obj, objs, func(u Use) bool {
		uses = append(uses, u)
		return true
	})
	return uses, err
}

// AnyPending reports whether one of the claims Pending would return has a
// verdict that counts, and stops at the first: source protection asks it
// on every change of a claim or volume of the source, and while a thousand
// claims restore from one snapshot, listing them all each time is most of
// the sidecar's CPU. With an error (the link cache could not be read, see
// Pending) the answer is unknown, and nothing is judged.
func (f Finder) AnyPending(src datasource.Source, obj metav1.Object, counts func(Use) bool) (bool, error) {
	objs, err := f.claimsOf(src)
	if err != nil {
		return false, err
	}
	found := false
	f.pending(src, obj, objs, func(u Use) bool {
		found = counts(u)
		return !found
	})
	return found, nil
}

// pending calls yield with each of objs that is a pending claim of src
// (see Pending), until yield returns false.
func (f Finder) pending(src datasource.Source, obj metav1.Object, objs []found, yield func(Use) bool) {
	for _, o := range objs {
		claim, ok := o.claim.(*v1.PersistentVolumeClaim)
		if !ok || claim.DeletionTimestamp != nil ||
			!datasource.ServesUseDespiteDeletion(obj, src.Finalizer(), f.Policy.Order, claimsource.UseObjects(claim, o.link)...) {
			continue
		}
		if _, err := f.Volumes.Get(f.VolumeName(claim)); !apierrors.IsNotFound(err) {
			continue // provisioned (or the cache cannot say otherwise)
		}
		if named, verdict, err := f.policyFor(claim).Admit(claim); err == nil && holds(src, named) && !yield(Use{Claim: claim, Verdict: verdict}) {
			return
		}
	}
}

// holds reports whether a claim naming named holds the finalizer of the
// use src (see the package comment); claimsOf found it under src's object.
func holds(src, named datasource.Source) bool {
	return src.ThroughLink || !src.ExplicitNamespace || named.ExplicitNamespace
}

// policyFor is the policy that judges claim: Policy for the claims of
// Provisioner, else Policy with the cross-namespace gate on (see the
// package comment).
func (f Finder) policyFor(claim *v1.PersistentVolumeClaim) claimsource.Policy {
	if f.Provisioner == "" || claimsource.ProvisionerOf(claim) == f.Provisioner {
		return f.Policy
	}
	p := f.Policy
	p.CrossNamespace = true
	return p
}

// found is an indexed claim and the VolumeSnapshotLink it names its
// source through, nil when it names the source directly: a use through a
// link is as new as the later of the two (claimsource.UseObjects).
type found struct {
	claim any
	link  *snapv1alpha1.VolumeSnapshotLink
}

// claimsOf returns the indexed (pending) claims that name src or, for a
// snapshot used through links, that name a VolumeSnapshotLink to it.
func (f Finder) claimsOf(src datasource.Source) ([]found, error) {
	var objs []found
	if !src.ThroughLink {
		direct, _ := f.Claims.ByIndex(requeue.SourceIndex, requeue.SourceKey(src))
		for _, c := range direct {
			objs = append(objs, found{claim: c})
		}
		return objs, nil
	}
	if f.Links == nil {
		return nil, nil
	}
	links, err := f.Links.LinksTo(src.Namespace, src.Name)
	for _, l := range links {
		through, _ := f.Claims.ByIndex(requeue.SourceIndex, requeue.LinkKey(l.Namespace, l.Name))
		for _, c := range through {
			objs = append(objs, found{claim: c, link: l})
		}
	}
	return objs, err
}
