package snapshotwebhook

import (
	"slices"
	"strings"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/pkg/claimsource"
	"github.com/xns-csi/csi-provisioner/pkg/datasource"
	"github.com/xns-csi/csi-provisioner/pkg/requeue"
)

// eachHeld calls visit once for each snapshot the guard holds now, with
// the creation of the oldest claim holding it, for the held-snapshot
// gauges. It returns false, visiting nothing, while the claim, volume and
// class caches have not synced: the guard cannot tell then.
//
// The webhook reads no snapshots (it has no RBAC on them): a DELETE
// brings the snapshot with it. So each snapshot is judged as the claims
// in the cache name it (restored), by the guard's own check: a snapshot
// not being deleted, of an unknown class, carrying the source-protection
// finalizer of each use the claims make of it, as the sidecar puts it on
// just before CreateVolume. A snapshot held here is one whose deletion the
// guard denies once its restore has begun; before that (the claim refused
// by the sidecar, e.g. its snapshot not ready) its deletion is allowed.
func (g *DeleteGuard) eachHeld(visit func(since time.Time)) bool {
	if !g.synced() {
		return false
	}
	for _, snap := range g.restored() {
		if v := g.check(snap); len(v.claims) > 0 {
			visit(v.since)
		}
	}
	return true
}

// restored returns the snapshots the pending claims in the cache are to
// be provisioned from (directly or through a VolumeSnapshotLink), as the
// claims name them, each with the finalizers of the uses they make of it.
func (g *DeleteGuard) restored() map[string]*snapv1.VolumeSnapshot {
	snaps := map[string]*snapv1.VolumeSnapshot{}
	grants := requeue.GrantKey("")
	for _, key := range g.Finder.Claims.ListIndexFuncValues(requeue.SourceIndex) {
		if strings.HasPrefix(key, grants) {
			continue // the claims are under their source's key too
		}
		objs, err := g.Finder.Claims.ByIndex(requeue.SourceIndex, key)
		if err != nil {
			continue
		}
		for _, obj := range objs {
			claim, ok := obj.(*v1.PersistentVolumeClaim)
			if !ok {
				continue
			}
			_, verdict, err := g.Finder.Policy.Admit(claim)
			if err != nil || verdict.Action != claimsource.Provision || verdict.Uses.Type() != datasource.Snapshot {
				continue
			}
			target := verdict.Uses.Target()
			snap, ok := snaps[target.Namespace+"/"+target.Name]
			if !ok {
				snap = &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: target.Namespace, Name: target.Name}}
				snaps[target.Namespace+"/"+target.Name] = snap
			}
			if f := verdict.Uses.Finalizer(); !slices.Contains(snap.Finalizers, f) {
				snap.Finalizers = append(snap.Finalizers, f)
			}
		}
	}
	return snaps
}
