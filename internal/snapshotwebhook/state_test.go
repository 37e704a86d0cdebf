package snapshotwebhook

import (
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/linkcache/linkcachetest"
	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge"
	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge/metricstest"
)

// now is the fake clock of the state gauges' tests.
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// createdAgo is the claim created d before now.
func createdAgo(d time.Duration, claim *v1.PersistentVolumeClaim) *v1.PersistentVolumeClaim {
	claim.CreationTimestamp = metav1.NewTime(now.Add(-d))
	return claim
}

// held scrapes the held-snapshot gauges of g.
func held(t *testing.T, g *DeleteGuard) []string {
	t.Helper()
	return metricstest.Collect(t, newStateCollector(stateSources{now: func() time.Time { return now }, guard: g}))
}

// TestASnapshotHeldByACrossNamespaceRestoreIsCountedUntilTheClaimIsBoundOrDeleted:
// the gauge shows the snapshot while the claim restoring it from another
// namespace is pending, aged from the claim's creation, and drops it once
// the claim is bound, and again once it is deleted.
func TestASnapshotHeldByACrossNamespaceRestoreIsCountedUntilTheClaimIsBoundOrDeleted(t *testing.T) {
	claim := createdAgo(time.Hour, restoring("prod", "restore", datasource.SnapshotKind, "snap"))
	g := guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{claim})
	metricstest.Expect(t, held(t, g),
		`snapshot_validation_webhook_guard_held_snapshots 1`,
		`snapshot_validation_webhook_guard_held_snapshots_oldest_seconds 3600`)

	bound := claim.DeepCopy()
	bound.Spec.VolumeName = "pvc-restore-uid"
	if err := g.Finder.Claims.Update(bound); err != nil {
		t.Fatal(err)
	}
	metricstest.Expect(t, held(t, g), `snapshot_validation_webhook_guard_held_snapshots 0`)

	if err := g.Finder.Claims.Update(claim); err != nil { // pending again, say a restore of the same name
		t.Fatal(err)
	}
	metricstest.Expect(t, held(t, g),
		`snapshot_validation_webhook_guard_held_snapshots 1`,
		`snapshot_validation_webhook_guard_held_snapshots_oldest_seconds 3600`)
	if err := g.Finder.Claims.Delete(claim); err != nil {
		t.Fatal(err)
	}
	metricstest.Expect(t, held(t, g), `snapshot_validation_webhook_guard_held_snapshots 0`)
}

// TestTheGaugeCountsTheSnapshotsTheGuardDenies: a snapshot is counted
// exactly when the guard denies its deletion once its restores have begun
// (it carries every protection finalizer), each snapshot once, aged from
// its oldest restore.
func TestTheGaugeCountsTheSnapshotsTheGuardDenies(t *testing.T) {
	prodRestore := createdAgo(time.Hour, restoring("prod", "restore", datasource.SnapshotKind, "snap"))
	link := linkcachetest.Link("prod", "to-snap", "ns", "snap")
	protected := snapshot(fromClaim("data"), withFinalizer(datasource.SnapshotFinalizer),
		withFinalizer(datasource.CrossNamespaceSnapshotFinalizer), withFinalizer(datasource.LinkSnapshotFinalizer))
	for name, tc := range map[string]struct {
		guard *DeleteGuard
		want  []string
	}{
		"a restore from another namespace holds its snapshot": {
			guard: guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{prodRestore}),
			want:  []string{`snapshot_validation_webhook_guard_held_snapshots 1`, `snapshot_validation_webhook_guard_held_snapshots_oldest_seconds 3600`}},
		"two restores of one snapshot count it once, aged from the older": {
			guard: guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{prodRestore,
				createdAgo(time.Minute, restoring("dev", "copy", datasource.SnapshotKind, "snap"))}),
			want: []string{`snapshot_validation_webhook_guard_held_snapshots 1`, `snapshot_validation_webhook_guard_held_snapshots_oldest_seconds 3600`}},
		"a restore through a VolumeSnapshotLink holds the link's snapshot": {
			guard: guardOf(t, granted, linkcachetest.Links{link}, true, []*v1.PersistentVolumeClaim{
				createdAgo(time.Minute, restoring("prod", "through", datasource.LinkKind, "to-snap"))}),
			want: []string{`snapshot_validation_webhook_guard_held_snapshots 1`, `snapshot_validation_webhook_guard_held_snapshots_oldest_seconds 60`}},
		"a restore in the snapshot's own namespace is the snapshot-controller's: nothing held": {
			guard: guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{restoring("ns", "local", datasource.SnapshotKind, "snap")}),
			want:  []string{`snapshot_validation_webhook_guard_held_snapshots 0`}},
		"a claim without a grant holds nothing": {
			guard: guardOf(t, notGranted, nil, true, []*v1.PersistentVolumeClaim{prodRestore}),
			want:  []string{`snapshot_validation_webhook_guard_held_snapshots 0`}},
		"a claim no provisioner works on holds nothing": {
			guard: guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{handedTo("", restoring("prod", "restore", datasource.SnapshotKind, "snap"))}),
			want:  []string{`snapshot_validation_webhook_guard_held_snapshots 0`}},
		"unreadable grants: the guard denies nothing, and nothing is held": {
			guard: guardOf(t, grantsDown, nil, true, []*v1.PersistentVolumeClaim{prodRestore}),
			want:  []string{`snapshot_validation_webhook_guard_held_snapshots 0`}},
		"unsynced caches cannot tell: no series": {
			guard: guardOf(t, granted, nil, false, []*v1.PersistentVolumeClaim{prodRestore})},
	} {
		t.Run(name, func(t *testing.T) {
			got := held(t, tc.guard)
			metricstest.Expect(t, got, tc.want...)
			denied := !(&Admitter{DeleteGuard: tc.guard}).Admit(request(t, admissionv1.Delete, snapshotsGVR, nil, protected)).allowed()
			if counted := len(got) == 2; counted != denied {
				t.Errorf("the snapshot is counted: %v; its deletion is denied: %v", counted, denied)
			}
		})
	}
}

func TestWithoutTheGuardNoSnapshotIsHeld(t *testing.T) {
	metricstest.Expect(t, held(t, nil))
}

// TestEachCacheIsAvailableOrSaysWhyNot: the class caches and the guard's
// say whether they can be read; an informer of a core API is available
// once synced, not_synced until then.
func TestEachCacheIsAvailableOrSaysWhyNot(t *testing.T) {
	synced := false
	c := newStateCollector(stateSources{apis: []stategauge.APIReporter{
		reported{Name: "VolumeSnapshotClass", State: optionalapi.StateNotServed},
		syncedCache{"PersistentVolumeClaim", func() bool { return synced }},
	}})
	metricstest.Expect(t, metricstest.Collect(t, c, "snapshot_validation_webhook_optional_api_available"),
		`snapshot_validation_webhook_optional_api_available{api="PersistentVolumeClaim"} 0`,
		`snapshot_validation_webhook_optional_api_available{api="VolumeSnapshotClass"} 0`)
	metricstest.Expect(t, metricstest.Collect(t, c, "snapshot_validation_webhook_optional_api_state")[:5],
		`snapshot_validation_webhook_optional_api_state{api="PersistentVolumeClaim",state="available"} 0`,
		`snapshot_validation_webhook_optional_api_state{api="PersistentVolumeClaim",state="failed"} 0`,
		`snapshot_validation_webhook_optional_api_state{api="PersistentVolumeClaim",state="forbidden"} 0`,
		`snapshot_validation_webhook_optional_api_state{api="PersistentVolumeClaim",state="not_served"} 0`,
		`snapshot_validation_webhook_optional_api_state{api="PersistentVolumeClaim",state="not_synced"} 1`)
	synced = true
	if got := metricstest.Collect(t, c, "snapshot_validation_webhook_optional_api_available"); got[0] != `snapshot_validation_webhook_optional_api_available{api="PersistentVolumeClaim"} 1` {
		t.Errorf("after the claim cache synced: %s", got[0])
	}
}

// reported is an optional API's cache in one state.
type reported optionalapi.Status

func (r reported) APIStatus() []optionalapi.Status {
	return []optionalapi.Status{optionalapi.Status(r)}
}

func TestStateGaugesAreLintClean(t *testing.T) {
	g := guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{createdAgo(time.Hour, restoring("prod", "restore", datasource.SnapshotKind, "snap"))})
	metricstest.Lint(t, newStateCollector(stateSources{guard: g, apis: []stategauge.APIReporter{reported{Name: "ReferenceGrant", State: optionalapi.StateAvailable}}}))
}
