package snapshotwebhook

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	admissionv1 "k8s.io/api/admission/v1"
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

// DeleteGuard keeps VolumeSnapshots that a cross-namespace restore is
// using from being deleted (--guard-cross-namespace-restores). The
// snapshot-controller looks for restoring claims only in the snapshot's
// own namespace, so it deletes the content and the backend snapshot of a
// snapshot deleted under a cross-namespace restore, whatever finalizer the
// provisioner put on the snapshot (external-snapshotter#905). The guard
// denies such a deletion while the snapshot carries a source-protection
// finalizer and a pending claim in another namespace would be provisioned
// from it (sourceuse, the provisioner's own answer); it never denies
// otherwise, nor when a cache cannot answer.
type DeleteGuard struct {
	// Finder reads the claims, volumes, links and grants from caches.
	Finder sourceuse.Finder
	// Synced reports whether the claim and volume caches have synced.
	Synced []cache.InformerSynced
}

// guardVerdict is the guard's decision on one snapshot.
type guardVerdict struct {
	// claims are the restoring claims (namespace/name) in other
	// namespaces; the deletion is denied when there are any.
	claims []string
	// undecided says why claims may be incomplete.
	undecided string
}

// check decides the deletion of snap.
func (g *DeleteGuard) check(snap *snapv1.VolumeSnapshot) guardVerdict {
	for _, synced := range g.Synced {
		if !synced() {
			return guardVerdict{undecided: "the claim and volume caches have not synced"}
		}
	}
	var v guardVerdict
	target := datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: snap.Namespace, Name: snap.Name}
	for _, src := range target.Uses() {
		if !slices.Contains(snap.Finalizers, src.Finalizer()) {
			continue // no provisioner protects it for this use
		}
		uses, err := g.Finder.Pending(src, snap)
		if err != nil {
			v.undecided = fmt.Sprintf("cannot read the VolumeSnapshotLinks: %v", err)
		}
		claims, undecided := crossNamespaceRestores(snap.Namespace, uses)
		v.claims = append(v.claims, claims...)
		if undecided != "" {
			v.undecided = undecided
		}
	}
	slices.Sort(v.claims)
	v.claims = slices.Compact(v.claims)
	return v
}

// crossNamespaceRestores returns the claims of uses outside namespace that
// will be provisioned from the snapshot, and why others may be as well
// when their grant or link cannot be read.
func crossNamespaceRestores(namespace string, uses []sourceuse.Use) (claims []string, undecided string) {
	for _, u := range uses {
		if u.Claim.Namespace == namespace {
			continue // the snapshot-controller waits for these itself
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

// refusal is the denial's message naming the claims.
func (v guardVerdict) refusal(snap *snapv1.VolumeSnapshot) string {
	if len(v.claims) == 0 {
		return ""
	}
	kind := "PersistentVolumeClaim"
	if len(v.claims) > 1 {
		kind += "s"
	}
	return fmt.Sprintf("the VolumeSnapshot is being restored across namespaces by %s %s: deleting it now would "+
		"delete its VolumeSnapshotContent and the backend snapshot under the restore, because the snapshot-controller looks for "+
		"restoring claims only in the snapshot's namespace %s (external-snapshotter#905); delete it once the claims are bound or deleted",
		kind, strings.Join(v.claims, ", "), snap.Namespace)
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
