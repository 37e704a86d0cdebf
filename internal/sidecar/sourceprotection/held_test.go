package sourceprotection

import (
	"errors"
	"slices"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// held lists what EachHeld visits, as kind/name, and the kinds it read.
func held(p *Protector) (visited, read []string) {
	read = p.EachHeld(func(kind string, obj metav1.Object) { visited = append(visited, kind+"/"+obj.GetName()) })
	slices.Sort(visited)
	return visited, read
}

// TestEachHeldVisitsTheSourcesThisProtectorReleases: the snapshots and
// claims carrying a protection finalizer this protector takes off (the
// links' only when links are followed); nothing of a cache that cannot be
// read.
func TestEachHeldVisitsTheSourcesThisProtectorReleases(t *testing.T) {
	claims := claimIndexer(t,
		&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "cloned", Finalizers: []string{datasource.CloneFinalizer}}},
		&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "cloned-across",
			Finalizers: []string{"kubernetes.io/pvc-protection", datasource.CrossNamespaceCloneFinalizer}}},
		&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "other", Finalizers: []string{"kubernetes.io/pvc-protection"}}},
		&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "none"}})
	snaps := snapshotList{snaps: []*snapv1.VolumeSnapshot{snapshotWith("restored", datasource.SnapshotFinalizer),
		snapshotWith("linked", datasource.LinkSnapshotFinalizer), snapshotWith("none")}}
	synced := func() bool { return true }

	visited, read := held(New(Config{Claims: claims, SnapshotList: snaps, Synced: []cache.InformerSynced{synced}}))
	if want := []string{"PersistentVolumeClaim/cloned", "PersistentVolumeClaim/cloned-across", "VolumeSnapshot/restored"}; !slices.Equal(visited, want) {
		t.Errorf("without links: visited %q, want %q", visited, want)
	}
	if want := []string{datasource.ClaimKind, datasource.SnapshotKind}; !slices.Equal(read, want) {
		t.Errorf("read %q, want %q", read, want)
	}
	visited, _ = held(New(Config{Claims: claims, SnapshotList: snaps, Links: storyLinks}))
	if !slices.Contains(visited, "VolumeSnapshot/linked") {
		t.Errorf("following links: visited %q, want the snapshot restored through a link among them", visited)
	}

	unsynced := func() bool { return false }
	visited, read = held(New(Config{Claims: claims, SnapshotList: snapshotList{err: errors.New("not served")},
		Synced: []cache.InformerSynced{synced, unsynced}}))
	if len(visited) != 0 || len(read) != 0 {
		t.Errorf("with no cache readable: visited %q, read %q; want nothing", visited, read)
	}
}
