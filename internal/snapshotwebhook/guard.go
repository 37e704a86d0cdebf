package snapshotwebhook

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/sourceuse"
)

// The reasons of the DELETE guard, the metrics' reason label.
const (
	// reasonCrossNamespaceRestore denies the deletion of a snapshot that a
	// claim the snapshot-controller does not wait for is being provisioned
	// from (the name is kept: most such claims are in other namespaces).
	reasonCrossNamespaceRestore = "cross-namespace-restore"
	// reasonRestoresUnknown allows a deletion the guard cannot decide: a
	// cache has not synced or cannot be read.
	reasonRestoresUnknown = "restores-unknown"
)

// DeleteGuard keeps VolumeSnapshots that a restore the snapshot-controller
// cannot see is using from being deleted (--guard-cross-namespace-restores).
// The snapshot-controller waits only for pending claims in the snapshot's
// own namespace whose spec.dataSource names it, so it deletes the content
// and the backend snapshot of a snapshot deleted under any other restore,
// whatever finalizer the provisioner put on the snapshot
// (external-snapshotter#905): a claim in another namespace, a claim naming
// dataSourceRef.namespace (kube-apiserver then leaves spec.dataSource
// empty, also when the namespace is the claim's own), a restore through a
// VolumeSnapshotLink. The guard denies such a deletion while the snapshot
// carries a source-protection finalizer and such a pending claim would be
// provisioned from it (sourceuse, the provisioner's own answer); it never
// denies otherwise, nor when a cache cannot answer.
//
// Only a claim a provisioner works on holds the snapshot: the PV
// controller annotates it (volume.kubernetes.io/storage-provisioner) once
// its StorageClass exists, names an external provisioner and, with
// WaitForFirstConsumer, a node was selected, and the guard checks the same
// of the claim as it is (worksOn), as the owner may write the annotation
// by hand. With the snapshot's VolumeSnapshotClass in the cache, the
// annotation must name the class's driver, the only one that can restore
// it. A claim of a missing class, another driver's class, or one that
// waits for a consumer never holds it. The snapshot's owner can always end a hold
// from other namespaces by revoking the ReferenceGrant that allows it; the
// denial says so.
type DeleteGuard struct {
	// Finder reads the claims, volumes, links and grants from caches.
	Finder sourceuse.Finder
	// Synced reports whether the claim and volume caches have synced.
	Synced []cache.InformerSynced
	// SnapshotClasses lists the VolumeSnapshotClasses, for the driver of
	// a snapshot; nil, or unreadable, any provisioner may restore it.
	SnapshotClasses ClassLister
	// StorageClasses are the claims' classes (worksOn); nil takes a
	// claim's provisioner annotation at its word.
	StorageClasses storagelisters.StorageClassLister
	// Snapshots reads which snapshots exist and their finalizers, for the
	// held-snapshot gauges only; nil, or unreadable, they say nothing.
	Snapshots SnapshotMetadata
}

// guardVerdict is the guard's decision on one snapshot.
type guardVerdict struct {
	// claims are the restoring claims (namespace/name) that the
	// snapshot-controller does not wait for; the deletion is denied when
	// there are any.
	claims []string
	// since is the creation of the oldest of the claims.
	since time.Time
	// undecided says why claims may be incomplete.
	undecided string
}

// driverOf returns the driver of snap's VolumeSnapshotClass, "" when it
// cannot be told.
func (g *DeleteGuard) driverOf(snap *snapv1.VolumeSnapshot) string {
	if g.SnapshotClasses == nil || snap.Spec.VolumeSnapshotClassName == nil {
		return ""
	}
	classes, err := g.SnapshotClasses()
	if err != nil {
		return ""
	}
	for _, c := range classes {
		if c.Name == *snap.Spec.VolumeSnapshotClassName {
			return c.Driver
		}
	}
	return ""
}

// synced reports whether the claim, volume and class caches have synced.
func (g *DeleteGuard) synced() bool {
	for _, synced := range g.Synced {
		if !synced() {
			return false
		}
	}
	return true
}

// check decides the deletion of snap.
func (g *DeleteGuard) check(snap *snapv1.VolumeSnapshot) guardVerdict {
	if !g.synced() {
		return guardVerdict{undecided: "the claim and volume caches have not synced"}
	}
	var v guardVerdict
	driver := g.driverOf(snap)
	target := datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: snap.Namespace, Name: snap.Name}
	for _, src := range target.Uses() {
		if !slices.Contains(snap.Finalizers, src.Finalizer()) {
			continue // no provisioner protects it for this use
		}
		uses, err := g.Finder.Pending(src, snap)
		if err != nil {
			v.undecided = fmt.Sprintf("cannot read the VolumeSnapshotLinks: %v", err)
		}
		claims, undecided := g.unseenRestores(snap, driver, uses)
		for _, c := range claims {
			v.claims = append(v.claims, c.Namespace+"/"+c.Name)
			if v.since.IsZero() || c.CreationTimestamp.Time.Before(v.since) {
				v.since = c.CreationTimestamp.Time
			}
		}
		if undecided != "" {
			v.undecided = undecided
		}
	}
	slices.Sort(v.claims)
	v.claims = slices.Compact(v.claims)
	return v
}

// unseenRestores returns the claims of uses that will be provisioned from
// snap by driver ("" any) without the snapshot-controller waiting for
// them, and why others may be as well when their grant or link cannot be
// read.
func (g *DeleteGuard) unseenRestores(snap *snapv1.VolumeSnapshot, driver string, uses []sourceuse.Use) (claims []*v1.PersistentVolumeClaim, undecided string) {
	for _, u := range uses {
		handedTo := claimsource.ProvisionerOf(u.Claim)
		if seenBySnapshotController(u.Claim, snap) || handedTo == "" || (driver != "" && handedTo != driver) || !g.worksOn(u.Claim, handedTo) {
			continue
		}
		switch {
		case u.Verdict.Action == claimsource.Provision:
			claims = append(claims, u.Claim)
		case u.Verdict.Reason == claimsource.ReasonGrantUnavailable || u.Verdict.Reason == claimsource.ReasonLinkAPIUnavailable:
			undecided = u.Verdict.Message
		}
	}
	return claims, undecided
}

// worksOn reports whether provisioner, which claim's annotation names,
// works on it, as the controller library decides (shouldProvision): its
// StorageClass exists and names that provisioner, and with
// WaitForFirstConsumer a node was selected. The annotation alone is the
// claim's owner's to write; a claim of a missing class, another
// provisioner's class, or one waiting for a consumer is never provisioned,
// whatever it says. Without a class cache, as before it, the annotation
// is taken at its word.
func (g *DeleteGuard) worksOn(claim *v1.PersistentVolumeClaim, provisioner string) bool {
	if g.StorageClasses == nil {
		return true
	}
	name := ptr.Deref(claim.Spec.StorageClassName, "")
	if beta, ok := claim.Annotations[v1.BetaStorageClassAnnotation]; ok {
		name = beta // read first, as the controller library does
	}
	class, err := g.StorageClasses.Get(name)
	switch {
	case err != nil || class.Provisioner != provisioner:
		return false
	case class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer:
		return claim.Annotations[annSelectedNode] != ""
	}
	return true
}

// annSelectedNode is the scheduler's choice of node for a claim of a
// WaitForFirstConsumer class.
const annSelectedNode = "volume.kubernetes.io/selected-node"

// seenBySnapshotController reports whether the snapshot-controller waits
// for claim before it deletes snap's content: a claim in snap's namespace
// whose spec.dataSource names it (isVolumeBeingCreatedFromSnapshot). A
// claim naming dataSourceRef.namespace, even its own, has no
// spec.dataSource; a claim naming a VolumeSnapshotLink names no snapshot
// there.
func seenBySnapshotController(claim *v1.PersistentVolumeClaim, snap *snapv1.VolumeSnapshot) bool {
	ds := claim.Spec.DataSource
	return claim.Namespace == snap.Namespace && ds != nil && ds.Kind == datasource.SnapshotKind && ds.Name == snap.Name &&
		ds.APIGroup != nil && *ds.APIGroup == datasource.SnapshotGroup
}

// namespaces are those of the claims, each once.
func (v guardVerdict) namespaces() []string {
	var out []string
	for _, c := range v.claims {
		ns, _, _ := strings.Cut(c, "/")
		if !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}

// refusal is the denial's message naming the claims.
func (v guardVerdict) refusal(snap *snapv1.VolumeSnapshot) string {
	if len(v.claims) == 0 {
		return ""
	}
	kind := "PersistentVolumeClaim"
	if len(v.claims) > 1 {
		kind += "s"
	}
	return fmt.Sprintf("the VolumeSnapshot is being restored by %s %s: deleting it now would "+
		"delete its VolumeSnapshotContent and the backend snapshot under the restore, because the snapshot-controller waits only for "+
		"claims in the snapshot's namespace %s whose spec.dataSource names it (external-snapshotter#905); delete it once the claims are bound or deleted, "+
		"or end the restores first: a claim stops holding the snapshot when it is deleted or when the ReferenceGrant in namespace %s "+
		"that lets its namespace (%s) restore from here is revoked",
		kind, strings.Join(v.claims, ", "), snap.Namespace, snap.Namespace, strings.Join(v.namespaces(), ", "))
}

// decide answers the DELETE of a VolumeSnapshot, which carries the object
// as the request's old object.
func (g *DeleteGuard) decide(req *admissionv1.AdmissionRequest) verdict {
	v := verdict{resource: snapshots, kind: schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}}
	snap, err := decodeObject[snapv1.VolumeSnapshot](req.OldObject)
	if err != nil {
		v.reason, v.cause = reasonUndecodable, err
		return v
	}
	checked := g.check(snap)
	if v.refusal = checked.refusal(snap); v.refusal != "" {
		v.reason = reasonCrossNamespaceRestore
		return v
	}
	if checked.undecided != "" {
		v.reason, v.cause = reasonRestoresUnknown, errors.New(checked.undecided)
	}
	return v
}
