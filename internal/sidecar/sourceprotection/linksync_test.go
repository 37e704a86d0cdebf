package sourceprotection

import (
	"errors"
	"slices"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// snapshotList lists fixed snapshots, or fails with err.
type snapshotList struct {
	snaps []*snapv1.VolumeSnapshot
	err   error
}

func (l snapshotList) ListSnapshots() ([]*snapv1.VolumeSnapshot, error) { return l.snaps, l.err }

func snapshotWith(name string, finalizers ...string) *snapv1.VolumeSnapshot {
	return &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: name, Finalizers: finalizers}}
}

// TestLinksSyncedRechecksLinkProtectedSnapshots: once the link cache can
// be read, every snapshot carrying the links' finalizer is decided again:
// it was kept while the cache could not be read, and the claim that got
// its volume meanwhile re-queued nothing.
func TestLinksSyncedRechecksLinkProtectedSnapshots(t *testing.T) {
	snaps := snapshotList{snaps: []*snapv1.VolumeSnapshot{
		snapshotWith("snap", datasource.LinkSnapshotFinalizer, "other"),
		snapshotWith("direct", datasource.SnapshotFinalizer),
		snapshotWith("none"),
	}}
	p := New(Config{Links: storyLinks, SnapshotList: snaps})
	defer p.queue.ShutDown()
	p.LinksSynced()
	if got := queued(p); !slices.Equal(got, []datasource.Source{prodSnapViaLink}) {
		t.Errorf("queued %v, want only %v", got, prodSnapViaLink)
	}

	p = New(Config{Links: storyLinks, SnapshotList: snapshotList{err: errors.New("not synced")}})
	defer p.queue.ShutDown()
	p.LinksSynced()
	if got := queued(p); len(got) != 0 {
		t.Errorf("with the snapshot cache unreadable queued %v, want nothing (its sync queues each snapshot)", got)
	}
}
