package sourceuse

import (
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/linkcache/linkcachetest"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/deletionorder"
)

// snapshots serves one snapshot to provisioning's decision.
type snapshots struct{ snap *snapv1.VolumeSnapshot }

func (s snapshots) GetSnapshot(_, _ string) (*snapv1.VolumeSnapshot, error)  { return s.snap, nil }
func (s snapshots) GetContent(string) (*snapv1.VolumeSnapshotContent, error) { return nil, nil }

// TestALinkAsNewAsItsUseHoldsNothing: a claim through a link holds the
// snapshot being deleted only when the claim and the link were both there
// before the deletion request (issue 21, defect 7), and provisioning
// agrees: it refuses exactly the claims that hold nothing.
func TestALinkAsNewAsItsUseHoldsNothing(t *testing.T) {
	deletedAt := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	before, after := deletedAt.Add(-time.Minute), deletedAt.Add(time.Minute)
	snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "snap", UID: "snap",
		DeletionTimestamp: &metav1.Time{Time: deletedAt}, Finalizers: []string{datasource.LinkSnapshotFinalizer}}}
	linked := datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "prod", Name: "snap", ThroughLink: true}
	for _, tt := range []struct {
		name            string
		claimAt, linkAt time.Time
		linkUID         types.UID
		// deletionSeen: the sidecar saw the deletion request arrive,
		// before it first saw the link.
		deletionSeen bool
		want         bool
	}{
		{"an old link and an old claim are still served", before, before, "link-1", false, true},
		{"a link created after the snapshot's deletion request is not served", before, after, "link-1", false, false},
		{"a link re-created after the deletion request does not hold the snapshot for its older claim", before, after, "link-2", false, false},
		{"an old link does not hold the snapshot for a claim created after the deletion request", after, before, "link-1", false, false},
		{"a link created in the second of the deletion request, seen after it arrived, is not served", before, deletedAt, "link-2", true, false},
		{"a link created in the second of a deletion request nobody saw arrive is served (a restarted sidecar keeps its promise)",
			before, deletedAt, "link-1", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := claim("l", throughLink)
			c.CreationTimestamp = metav1.NewTime(tt.claimAt)
			l := linkcachetest.Link("test", "to-snap", "prod", "snap")
			l.UID, l.CreationTimestamp = tt.linkUID, metav1.NewTime(tt.linkAt)
			f := finder(t, []*v1.PersistentVolumeClaim{c})
			order := deletionorder.New(nil)
			if tt.deletionSeen {
				requested := snap.DeepCopy()
				requested.DeletionTimestamp = nil
				order.SourceHandler().OnUpdate(requested, snap) // the update that set deletionTimestamp
			}
			f.Links, f.Policy.Links, f.Policy.Order = linkcachetest.Links{l}, linkcachetest.Links{l}, order
			uses, err := f.Pending(linked, snap)
			if err != nil {
				t.Fatal(err)
			}
			if held := len(uses) == 1 && uses[0].Verdict.HoldsSource(); held != tt.want {
				t.Errorf("the claim holds the snapshot: %v, want %v", held, tt.want)
			}
			f.Policy.Snapshots, f.Policy.Driver = snapshots{snap}, claimsource.Driver{RestoresSnapshots: true}
			_, v, err := f.Policy.Decide(c, "fast")
			if refused := v.Reason == claimsource.ReasonSnapshotBeingDeleted; err != nil || refused == tt.want {
				t.Errorf("provisioning decides %s (%v); want it to refuse (%s) exactly the claims that hold nothing", v.Reason, err, claimsource.ReasonSnapshotBeingDeleted)
			}
		})
	}
}
