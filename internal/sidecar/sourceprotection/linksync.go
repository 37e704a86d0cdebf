package sourceprotection

import (
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// SnapshotLister lists the snapshots in the cache (see package
// snapshotcache).
type SnapshotLister interface {
	ListSnapshots() ([]*snapv1.VolumeSnapshot, error)
}

// LinksSynced re-checks every snapshot that carries the finalizer of
// restores through links; call it when the VolumeSnapshotLink cache has
// synced, at start or after it could not be read. Until then those
// snapshots were kept, whatever happened meanwhile: "cannot tell" is "in
// use" (see inUse), and a claim that got its volume or went away then
// re-queued nothing, as its link could not be read either.
func (p *Protector) LinksSynced() {
	if p.cfg.Links == nil || p.cfg.SnapshotList == nil {
		return
	}
	snaps, err := p.cfg.SnapshotList.ListSnapshots()
	if err != nil {
		return // each is queued by its own event once the snapshot cache syncs
	}
	for _, snap := range snaps {
		if target, _, _ := sourceOf(snap); hasFinalizer(snap, datasource.LinkSnapshotFinalizer) {
			target.ThroughLink = true
			p.Recheck(target)
		}
	}
}
