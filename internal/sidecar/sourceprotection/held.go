package sourceprotection

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// EachHeld calls visit with each snapshot and claim the caches show
// carrying a protection finalizer this protector takes off when unused (see
// queueProtected): a restore or clone from it may be in progress, or ended
// within Config.Linger. kind is datasource.SnapshotKind or
// datasource.ClaimKind. It returns the kinds it could read; of the others
// nothing can be told (the claim cache has not synced, the snapshot cache
// is not served or refused), and none is visited. It is meant for gauges
// read at each scrape: it lists the caches, and costs nothing otherwise.
func (p *Protector) EachHeld(visit func(kind string, obj metav1.Object)) (read []string) {
	if p.synced() {
		for _, obj := range p.cfg.Claims.List() {
			if claim, ok := obj.(*v1.PersistentVolumeClaim); ok && p.holds(claim) {
				visit(datasource.ClaimKind, claim)
			}
		}
		read = append(read, datasource.ClaimKind)
	}
	if p.cfg.SnapshotList != nil {
		if snaps, err := p.cfg.SnapshotList.ListSnapshots(); err == nil {
			for _, snap := range snaps {
				if p.holds(snap) {
					visit(datasource.SnapshotKind, snap)
				}
			}
			read = append(read, datasource.SnapshotKind)
		}
	}
	return read
}

// holds reports whether obj, a cached snapshot or claim, carries a
// finalizer this protector releases.
func (p *Protector) holds(obj metav1.Object) bool {
	if len(obj.GetFinalizers()) == 0 {
		return false // most objects: no need to name their uses
	}
	target, _, _ := sourceOf(obj)
	for _, use := range target.Uses() {
		if p.releases(obj, use) {
			return true
		}
	}
	return false
}

// synced reports whether the caches that Config.Synced names have synced.
func (p *Protector) synced() bool {
	for _, hasSynced := range p.cfg.Synced {
		if !hasSynced() {
			return false
		}
	}
	return true
}
