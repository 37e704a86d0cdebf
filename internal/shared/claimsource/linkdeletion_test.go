package claimsource

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// seenAfterDeletion orders the objects of these UIDs after the deletion
// request in its second, the others before it; an object it does not
// list is unknown when known is false.
type seenAfterDeletion struct {
	after map[types.UID]bool
	known bool
}

func (o seenAfterDeletion) CreatedAfterDeletion(obj, _ metav1.Object) (after, known bool) {
	after, listed := o.after[obj.GetUID()]
	return after, listed || o.known
}

// TestALinkIsAsNewAsItsUse: a restore through a VolumeSnapshotLink is a use
// of the snapshot by the claim and the link together; a snapshot whose
// deletion was requested serves it only when both were there first (issue
// 21, defect 7), and the links' finalizer holds the snapshot for it.
func TestALinkIsAsNewAsItsUse(t *testing.T) {
	before, after := deletedAt.Add(-time.Minute), deletedAt.Add(time.Minute)
	sameSecond := deletedAt.Add(300 * time.Millisecond) // the API keeps whole seconds
	tests := []struct {
		name            string
		claimAt, linkAt time.Time
		linkUID         types.UID
		order           datasource.DeletionOrder
		want            Reason
	}{
		{"an old link and an old claim are still served", before, before, "link-1", nil, ReasonAllowed},
		{"a link created after the snapshot's deletion request is not served", before, after, "link-1", nil, ReasonSnapshotBeingDeleted},
		{"a link re-created after the deletion request is not served, though its claim is older",
			before, after, "link-2", nil, ReasonSnapshotBeingDeleted},
		{"an old link does not serve a claim created after the deletion request", after, before, "link-1", nil, ReasonSnapshotBeingDeleted},
		{"a link created in the second of the deletion request, seen after it arrived, is not served",
			before, sameSecond, "link-2", seenAfterDeletion{after: map[types.UID]bool{"link-2": true}, known: true}, ReasonSnapshotBeingDeleted},
		{"a link created in the second of the deletion request, seen before it arrived, is served",
			before, sameSecond, "link-1", seenAfterDeletion{known: true}, ReasonAllowed},
		{"a link created in the second of a deletion request nobody saw arrive is served (a restarted sidecar keeps its promise)",
			before, sameSecond, "link-1", seenAfterDeletion{}, ReasonAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := snapshotCase{opts: []snapOption{deletionRequested(deletedAt, datasource.LinkSnapshotFinalizer)}, claimCreated: tt.claimAt}.input()
			in.Source, in.SnapshotLinks, in.Link, in.Order = linkSource(false), true, link("prod"), tt.order
			in.Link.UID, in.Link.CreationTimestamp = tt.linkUID, metav1.NewTime(tt.linkAt.Truncate(time.Second))
			in.Claim.UID = "claim"
			if got := Decide(in); got.Reason != tt.want {
				t.Errorf("Decide() = %s (%s), want %s", got.Reason, got.Message, tt.want)
			}
		})
	}
}
