package snapshotwebhook

import (
	"slices"
	"strings"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/requeue"
)

// eachHeld calls visit once for each snapshot the guard holds now, with
// the creation of the oldest claim holding it, for the held-snapshot
// gauges. It returns false, visiting nothing, while the claim, volume,
// class or snapshot caches cannot be read: the guard cannot tell then.
//
// Each snapshot that the pending claims in the cache restore (restored)
// is judged by the guard's own check, as it is cached: a snapshot that
// does not exist, or whose restores have not begun (it carries no
// protection finalizer of theirs: the sidecar puts it on just before
// CreateVolume, and not while it refuses the claim), is not held. So a
// claim that names a snapshot existing nowhere counts for nothing.
func (g *DeleteGuard) eachHeld(visit func(since time.Time)) bool {
	if !g.synced() || g.Snapshots == nil {
		return false
	}
	var held []time.Time
	for _, named := range g.restored() {
		cached, ok, err := g.Snapshots.SnapshotMeta(named.Namespace, named.Name)
		if err != nil {
			return false
		}
		if !ok {
			continue
		}
		snap := named.DeepCopy()
		snap.Finalizers = cached.Finalizers
		if v := g.check(snap); len(v.claims) > 0 {
			held = append(held, v.since)
		}
	}
	for _, since := range held {
		visit(since)
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
