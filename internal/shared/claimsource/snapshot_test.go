package claimsource

import (
	"errors"
	"strings"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

type snapOption func(*snapv1.VolumeSnapshot, *snapv1.VolumeSnapshotContent)

// newPair returns a ready snapshot prod/snap bound to content "content".
func newPair(opts ...snapOption) (*snapv1.VolumeSnapshot, *snapv1.VolumeSnapshotContent) {
	snap := &snapv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: "prod", UID: "snap-uid"},
		Status: &snapv1.VolumeSnapshotStatus{
			BoundVolumeSnapshotContentName: ptr("content"),
			ReadyToUse:                     ptr(true),
			RestoreSize:                    ptr(resource.MustParse("1Gi")),
		},
	}
	content := &snapv1.VolumeSnapshotContent{
		ObjectMeta: metav1.ObjectMeta{Name: "content"},
		Spec: snapv1.VolumeSnapshotContentSpec{
			VolumeSnapshotRef: v1.ObjectReference{Name: "snap", Namespace: "prod", UID: "snap-uid"},
			Driver:            driver,
			SourceVolumeMode:  ptr(v1.PersistentVolumeFilesystem),
		},
		Status: &snapv1.VolumeSnapshotContentStatus{SnapshotHandle: ptr("handle-1"), ReadyToUse: ptr(true)},
	}
	for _, o := range opts {
		o(snap, content)
	}
	return snap, content
}

// deletedAt is when deletionRequested asks to delete the snapshot.
var deletedAt = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// deletionRequested marks the snapshot deleted at t, held by finalizers.
func deletionRequested(t time.Time, finalizers ...string) snapOption {
	return func(s *snapv1.VolumeSnapshot, _ *snapv1.VolumeSnapshotContent) {
		s.DeletionTimestamp, s.Finalizers = &metav1.Time{Time: t}, finalizers
	}
}

// snapshotCase is a snapshot restore and the reason Decide gives it.
type snapshotCase struct {
	name       string
	opts       []snapOption
	noSnapshot bool
	noContent  bool
	unreadable error
	requested  int64
	mode       *v1.PersistentVolumeMode
	prevent    bool
	// claimCreated is when the claim was created; zero is long ago.
	claimCreated time.Time
	want         Reason
	wantInMsg    string
}

var block = ptr(v1.PersistentVolumeBlock)

// snapshotCases are the snapshot checks, in the order Decide makes them.
var snapshotCases = []snapshotCase{
	{name: "a ready, bound snapshot of this driver is usable", want: ReasonAllowed},
	{name: "a snapshot cache that cannot be read is reported", unreadable: errors.New("not served"),
		want: ReasonSnapshotAPIUnavailable, wantInMsg: "not served"},
	{name: "a missing snapshot is reported", noSnapshot: true, want: ReasonSnapshotNotFound, wantInMsg: "does not exist"},
	{name: "a snapshot being deleted is refused",
		opts: []snapOption{deletionRequested(deletedAt)},
		want: ReasonSnapshotBeingDeleted},
	{name: "a protected snapshot being deleted still serves a claim that was there first",
		opts: []snapOption{deletionRequested(deletedAt, datasource.CrossNamespaceSnapshotFinalizer)}, claimCreated: deletedAt.Add(-time.Minute),
		want: ReasonAllowed},
	{name: "a protected snapshot being deleted refuses a claim created after the deletion request",
		opts: []snapOption{deletionRequested(deletedAt, datasource.CrossNamespaceSnapshotFinalizer)}, claimCreated: deletedAt.Add(time.Minute),
		want: ReasonSnapshotBeingDeleted},
	{name: "an unbound snapshot waits for the snapshot controller",
		opts: []snapOption{func(s *snapv1.VolumeSnapshot, _ *snapv1.VolumeSnapshotContent) {
			s.Status.BoundVolumeSnapshotContentName = nil
		}},
		want: ReasonSnapshotNotBound},
	{name: "a snapshot without status waits too",
		opts: []snapOption{func(s *snapv1.VolumeSnapshot, _ *snapv1.VolumeSnapshotContent) { s.Status = nil }},
		want: ReasonSnapshotNotBound},
	{name: "a missing content is reported", noContent: true, want: ReasonSnapshotContentNotFound},
	{name: "a content bound to another snapshot is refused",
		opts: []snapOption{func(_ *snapv1.VolumeSnapshot, c *snapv1.VolumeSnapshotContent) {
			c.Spec.VolumeSnapshotRef.Name = "other"
		}},
		want: ReasonSnapshotContentMismatch, wantInMsg: "prod/other"},
	{name: "a content bound to a former snapshot of the same name is refused",
		opts: []snapOption{func(_ *snapv1.VolumeSnapshot, c *snapv1.VolumeSnapshotContent) { c.Spec.VolumeSnapshotRef.UID = "old" }},
		want: ReasonSnapshotContentMismatch},
	{name: "a content of another driver is refused",
		opts: []snapOption{func(_ *snapv1.VolumeSnapshot, c *snapv1.VolumeSnapshotContent) { c.Spec.Driver = "other.example.com" }},
		want: ReasonSnapshotOfOtherDriver, wantInMsg: "other.example.com"},
	{name: "a snapshot that is not ready waits",
		opts: []snapOption{func(s *snapv1.VolumeSnapshot, _ *snapv1.VolumeSnapshotContent) { s.Status.ReadyToUse = ptr(false) }},
		want: ReasonSnapshotNotReady, wantInMsg: "not ready"},
	{name: "a content without handle waits",
		opts: []snapOption{func(_ *snapv1.VolumeSnapshot, c *snapv1.VolumeSnapshotContent) { c.Status.SnapshotHandle = nil }},
		want: ReasonSnapshotHandleMissing},
	{name: "a request below the restore size is refused with the size to ask for",
		requested: 1 << 20, want: ReasonRequestedSizeTooSmall, wantInMsg: "request at least 1073741824 bytes"},
	{name: "the content's restore size counts when the snapshot has none",
		opts: []snapOption{func(s *snapv1.VolumeSnapshot, c *snapv1.VolumeSnapshotContent) {
			s.Status.RestoreSize = nil
			c.Status.RestoreSize = ptr(int64(2 << 30))
		}},
		want: ReasonRequestedSizeTooSmall},
	{name: "a volume mode change is refused when conversion is prevented",
		mode: block, prevent: true, want: ReasonVolumeModeConversion, wantInMsg: "allow-volume-mode-change"},
	{name: "a volume mode change is allowed by the content's annotation",
		mode: block, prevent: true, want: ReasonAllowed,
		opts: []snapOption{func(_ *snapv1.VolumeSnapshot, c *snapv1.VolumeSnapshotContent) {
			c.Annotations = map[string]string{datasource.AllowVolumeModeChangeAnnotations[0]: "true"}
		}}},
	{name: "the issue's spelling of the annotation is honored too",
		mode: block, prevent: true, want: ReasonAllowed,
		opts: []snapOption{func(_ *snapv1.VolumeSnapshot, c *snapv1.VolumeSnapshotContent) {
			c.Annotations = map[string]string{"snapshot.storage.k8s.io/allow-volume-mode-change": "true"}
		}}},
	{name: "a volume mode change is allowed when conversion is not prevented", mode: block, want: ReasonAllowed},
}

// input is the case's Decide input: a claim in "test" restoring prod/snap
// with a grant.
func (tt snapshotCase) input() Input {
	snap, content := newPair(tt.opts...)
	if tt.noSnapshot {
		snap = nil
	}
	if tt.noContent {
		content = nil
	}
	requested := tt.requested
	if requested == 0 {
		requested = 1 << 30
	}
	claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "test", Name: "restore", CreationTimestamp: metav1.NewTime(tt.claimCreated)},
		Spec: v1.PersistentVolumeClaimSpec{VolumeMode: tt.mode, Resources: requests(requested)}}
	return Input{Claim: claim, Source: snapshotIn("prod"), CrossNamespace: true, Grant: granted,
		Driver:   Driver{Name: driver, RestoresSnapshots: true, PreventVolumeModeConversion: tt.prevent},
		Snapshot: snap, Content: content, Unreadable: tt.unreadable}
}

func TestDecideSnapshot(t *testing.T) {
	for _, tt := range snapshotCases {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.input())
			if got.Reason != tt.want {
				t.Fatalf("Decide() reason = %s (%s), want %s", got.Reason, got.Message, tt.want)
			}
			if tt.want == ReasonAllowed {
				if got.Action != Provision || got.Content.GetSnapshot().GetSnapshotId() != "handle-1" {
					t.Errorf("allowed verdict = %+v, want Provision from handle-1", got)
				}
				return
			}
			if got.Action != Refuse || got.Content != nil {
				t.Errorf("refusal = %+v, want Refuse without content", got)
			}
			if got.Message == "" || !strings.Contains(got.Message, tt.wantInMsg) {
				t.Errorf("Decide() message = %q, want it to contain %q", got.Message, tt.wantInMsg)
			}
		})
	}
}
