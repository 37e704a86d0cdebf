package snapshotwebhook

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/pkg/claimsource"
	"github.com/xns-csi/csi-provisioner/pkg/datasource"
	"github.com/xns-csi/csi-provisioner/pkg/sourceuse"
)

// The reasons of the DELETE guard, the metrics' reason label.
const (
	// reasonCrossNamespaceRestore denies the deletion of a snapshot that a
	// claim in another namespace is being provisioned from.
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
// Only a claim handed to a provisioner holds the snapshot: the PV
// controller annotates it (volume.kubernetes.io/storage-provisioner) once
// its StorageClass exists, names an external provisioner and, with
// WaitForFirstConsumer, a node was selected. With the snapshot's
// VolumeSnapshotClass in the cache, the annotation must name the class's
// driver, the only one that can restore it. A claim of a missing class,
// another driver's class, or one that waits for a consumer never holds it.
// A claim its owner annotated by hand is provisioned for real, and holds
// no longer than its restore. The snapshot's owner can always end a hold
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
}

// guardVerdict is the guard's decision on one snapshot.
type guardVerdict struct {
	// claims are the restoring claims (namespace/name) that the
	// snapshot-controller does not wait for; the deletion is denied when
	// there are any.
	claims []string
	// undecided says why claims may be incomplete.
	undecided string
	// driver is the snapshot's driver, "" when not known.
	driver string
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

// check decides the deletion of snap.
func (g *DeleteGuard) check(snap *snapv1.VolumeSnapshot) guardVerdict {
	for _, synced := range g.Synced {
		if !synced() {
			return guardVerdict{undecided: "the claim and volume caches have not synced"}
		}
	}
	v := guardVerdict{driver: g.driverOf(snap)}
	target := datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: snap.Namespace, Name: snap.Name}
	for _, src := range target.Uses() {
		if !slices.Contains(snap.Finalizers, src.Finalizer()) {
			continue // no provisioner protects it for this use
		}
		uses, err := g.Finder.Pending(src, snap)
		if err != nil {
			v.undecided = fmt.Sprintf("cannot read the VolumeSnapshotLinks: %v", err)
		}
		claims, undecided := unseenRestores(snap, v.driver, uses)
		v.claims = append(v.claims, claims...)
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
func unseenRestores(snap *snapv1.VolumeSnapshot, driver string, uses []sourceuse.Use) (claims []string, undecided string) {
	for _, u := range uses {
		handedTo := claimsource.ProvisionerOf(u.Claim)
		if seenBySnapshotController(u.Claim, snap) || handedTo == "" || (driver != "" && handedTo != driver) {
			continue
		}
		switch {
		case u.Verdict.Action == claimsource.Provision:
			claims = append(claims, u.Claim.Namespace+"/"+u.Claim.Name)
		case u.Verdict.Reason == claimsource.ReasonGrantUnavailable || u.Verdict.Reason == claimsource.ReasonLinkAPIUnavailable:
			undecided = u.Verdict.Message
		}
	}
	return claims, undecided
}

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
