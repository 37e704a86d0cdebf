package linkstatus

import (
	"errors"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// The tests of this file: a link's status is no oracle for the snapshots
// of a namespace that did not allow the link (issue 21, defect 4).

// TestConditionsAreNoOracle: a link that may not use its snapshot reads
// the same, to the last character, whatever the snapshot's state (issue
// 21): its status cannot tell another namespace's snapshots apart.
func TestConditionsAreNoOracle(t *testing.T) {
	notReady := snapshot.DeepCopy()
	notReady.Status = &snapv1.VolumeSnapshotStatus{ReadyToUse: new(bool)}
	states := map[string]Input{
		"existing":   {Snapshot: snapshot},
		"not ready":  {Snapshot: notReady},
		"missing":    {},
		"unreadable": {SnapshotUnreadable: errors.New("not served")},
	}
	for name, grant := range map[string]referencegrant.Decision{
		"a link without grant":                      notGranted,
		"a link whose grant names another snapshot": otherSnapshotOnly,
		"a link whose grants cannot be read":        cannotTell,
	} {
		t.Run(name, func(t *testing.T) {
			var first []metav1.Condition
			for state, in := range states {
				in.Link, in.Grant = link("prod"), grant
				got := Conditions(in)
				if first == nil {
					first = got
				} else if !equality.Semantic.DeepEqual(got, first) {
					t.Errorf("with the snapshot %s the conditions are %+v, unlike %+v", state, got, first)
				}
			}
		})
	}
}

func TestASnapshotBehindALinkWithoutGrantChangesNothing(t *testing.T) {
	for name, grant := range map[string]referencegrant.Decision{
		"a snapshot coming and going behind a link without grant writes nothing to it":                      notGranted,
		"a snapshot coming and going behind a link whose grant names another snapshot writes nothing to it": otherSnapshotOnly,
		"a snapshot coming and going behind a link whose grants cannot be read writes nothing to it":        cannotTell,
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, grant)
			before := len(statusWrites(h.client))
			h.w.snaps["prod/foo-backup"] = snapshot
			h.c.SnapshotHandler().OnAdd(snapshot, false)
			h.drain()
			delete(h.w.snaps, "prod/foo-backup")
			h.c.SnapshotHandler().OnDelete(snapshot)
			h.drain()
			if n := len(statusWrites(h.client)) - before; n != 0 {
				t.Errorf("the link's status was written %d times, want none (Resolved now %+v)", n, h.resolved())
			}
		})
	}
}

func TestAWithdrawnGrantWithdrawsWhatTheLinkShowed(t *testing.T) {
	tests := []struct {
		name       string
		withdrawn  referencegrant.Decision
		wantReason claimsource.Reason
	}{
		{"a grant deleted after the link was resolved takes back whether the snapshot exists", notGranted, claimsource.ReasonGrantMissing},
		{"a grant narrowed to another snapshot after the link was resolved takes it back", otherSnapshotOnly, claimsource.ReasonGrantMissing},
		{"grants that can no longer be read take back whether the snapshot exists", cannotTell, claimsource.ReasonGrantUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, granted, snapshot)
			if got := h.resolved(); got == nil || got.Status != metav1.ConditionTrue {
				t.Fatalf("with the grant Resolved = %+v, want True", got)
			}
			h.w.grant = tt.withdrawn
			h.c.GrantsChanged("prod")
			h.drain()
			got := h.resolved()
			if got == nil || got.Status != metav1.ConditionUnknown || got.Reason != string(tt.wantReason) {
				t.Fatalf("after the grant was withdrawn Resolved = %+v, want Unknown/%s", got, tt.wantReason)
			}
			if never := meta.FindStatusCondition(Conditions(Input{Link: link("prod"), Grant: tt.withdrawn}), snapv1alpha1.ConditionResolved); got.Message != never.Message {
				t.Errorf("Resolved's message = %q, want %q, as for a link that was never allowed", got.Message, never.Message)
			}
		})
	}
}
