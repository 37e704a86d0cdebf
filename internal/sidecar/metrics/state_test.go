package metrics

import (
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge/metricstest"
)

// now is the fake clock of the state tests.
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return now.Add(-d) }

type waitingClaim struct {
	reason string
	since  time.Time
}

type fakeClaims []waitingClaim

func (f fakeClaims) EachWaitingClaim(visit func(reason string, since time.Time)) {
	for _, c := range f {
		visit(c.reason, c.since)
	}
}

type attempt struct {
	parked bool
	began  time.Time
}

type fakeAttempts []attempt

func (f fakeAttempts) EachAttempt(visit func(parked bool, began time.Time)) {
	for _, a := range f {
		visit(a.parked, a.began)
	}
}

// fakeSources holds objs; the kinds not in read cannot be read.
type fakeSources struct {
	objs []metav1.Object
	read []string
}

func (f *fakeSources) EachHeld(visit func(kind string, obj metav1.Object)) []string {
	for _, obj := range f.objs {
		if kind := kindOf(obj); slices.Contains(f.read, kind) {
			visit(kind, obj)
		}
	}
	return f.read
}

func kindOf(obj metav1.Object) string {
	if _, ok := obj.(*v1.PersistentVolumeClaim); ok {
		return datasource.ClaimKind
	}
	return datasource.SnapshotKind
}

// heldClaim is a protected claim, whose deletion was requested at the
// time given, if one is.
func heldClaim(uid string, deletion ...time.Time) metav1.Object {
	c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Finalizers: []string{datasource.CloneFinalizer}}}
	for _, d := range deletion {
		c.DeletionTimestamp = &metav1.Time{Time: d}
	}
	return c
}

type fakeAPIs []optionalapi.Status

func (f fakeAPIs) APIStatus() []optionalapi.Status { return f }

func collect(t *testing.T, src StateSources, names ...string) []string {
	t.Helper()
	src.Now = func() time.Time { return now }
	return metricstest.Collect(t, NewState(src), names...)
}

func TestWaitingClaimsAreCountedByReasonWithTheAgeOfTheOldest(t *testing.T) {
	claims := fakeClaims{{"ReferenceGrantMissing", ago(90 * time.Second)}, {"ReferenceGrantMissing", ago(30 * time.Second)},
		{"SnapshotNotReady", ago(10 * time.Second)}}
	metricstest.Expect(t, collect(t, StateSources{Claims: claims}),
		`csi_provisioner_waiting_claims{reason="ReferenceGrantMissing"} 2`,
		`csi_provisioner_waiting_claims_oldest_seconds{reason="ReferenceGrantMissing"} 90`,
		`csi_provisioner_waiting_claims{reason="SnapshotNotReady"} 1`,
		`csi_provisioner_waiting_claims_oldest_seconds{reason="SnapshotNotReady"} 10`)
	metricstest.Expect(t, collect(t, StateSources{Claims: fakeClaims{}})) // no reason is a series while no claim waits for it
}

func TestInFlightCallsAreCountedByStateWithTheAgeOfTheOldest(t *testing.T) {
	attempts := fakeAttempts{{false, ago(2 * time.Second)}, {true, ago(20 * time.Minute)}, {true, ago(5 * time.Minute)}}
	metricstest.Expect(t, collect(t, StateSources{Attempts: attempts}),
		`csi_provisioner_inflight_create_volumes{state="parked"} 2`,
		`csi_provisioner_inflight_create_volumes_oldest_seconds{state="parked"} 1200`,
		`csi_provisioner_inflight_create_volumes{state="running"} 1`,
		`csi_provisioner_inflight_create_volumes_oldest_seconds{state="running"} 2`)
	metricstest.Expect(t, collect(t, StateSources{Attempts: fakeAttempts{}}),
		`csi_provisioner_inflight_create_volumes{state="parked"} 0`,
		`csi_provisioner_inflight_create_volumes{state="running"} 0`)
}

// TestHeldSourcesAgeFromWhenFirstSeenAndTheirDeletionRequest: a hold's
// age counts from the scrape that first saw it, across scrapes; a
// deletion waiting counts from its request; a released source leaves; a
// kind that cannot be read has no series, and its holds keep their age.
func TestHeldSourcesAgeFromWhenFirstSeenAndTheirDeletionRequest(t *testing.T) {
	snap := &metav1.ObjectMeta{UID: "snap", Finalizers: []string{datasource.SnapshotFinalizer}}
	sources := &fakeSources{objs: []metav1.Object{snap, heldClaim("old")}, read: []string{datasource.SnapshotKind, datasource.ClaimKind}}
	clock := now
	c := NewState(StateSources{Sources: sources, Now: func() time.Time { return clock }})
	scrape := func() []string { return metricstest.Collect(t, c) }

	metricstest.Expect(t, scrape(),
		`csi_provisioner_protected_sources{kind="PersistentVolumeClaim"} 1`,
		`csi_provisioner_protected_sources_oldest_seconds{kind="PersistentVolumeClaim"} 0`,
		`csi_provisioner_protected_sources{kind="VolumeSnapshot"} 1`,
		`csi_provisioner_protected_sources_oldest_seconds{kind="VolumeSnapshot"} 0`,
		`csi_provisioner_protected_sources_deletion_waiting{kind="PersistentVolumeClaim"} 0`,
		`csi_provisioner_protected_sources_deletion_waiting{kind="VolumeSnapshot"} 0`)

	clock = clock.Add(time.Hour)
	sources.objs = []metav1.Object{heldClaim("old", clock.Add(-10*time.Minute)), heldClaim("new")} // the snapshot released
	sources.read = []string{datasource.ClaimKind}                                                  // and its API gone
	metricstest.Expect(t, scrape(),
		`csi_provisioner_protected_sources{kind="PersistentVolumeClaim"} 2`,
		`csi_provisioner_protected_sources_oldest_seconds{kind="PersistentVolumeClaim"} 3600`,
		`csi_provisioner_protected_sources_deletion_waiting{kind="PersistentVolumeClaim"} 1`,
		`csi_provisioner_protected_sources_deletion_waiting_oldest_seconds{kind="PersistentVolumeClaim"} 600`)

	clock = clock.Add(time.Hour)
	sources.objs = []metav1.Object{snap}
	sources.read = []string{datasource.SnapshotKind, datasource.ClaimKind}
	metricstest.Expect(t, scrape(),
		`csi_provisioner_protected_sources{kind="PersistentVolumeClaim"} 0`,
		`csi_provisioner_protected_sources{kind="VolumeSnapshot"} 1`,
		`csi_provisioner_protected_sources_oldest_seconds{kind="VolumeSnapshot"} 7200`,
		`csi_provisioner_protected_sources_deletion_waiting{kind="PersistentVolumeClaim"} 0`,
		`csi_provisioner_protected_sources_deletion_waiting{kind="VolumeSnapshot"} 0`)
}

func TestEachOptionalAPIIsAvailableOrSaysWhyNot(t *testing.T) {
	apis := []OptionalAPIs{fakeAPIs{{Name: "ReferenceGrant", State: optionalapi.StateAvailable}},
		fakeAPIs{{Name: "VolumeSnapshot", State: optionalapi.StateNotServed}, {Name: "VolumeSnapshotContent", State: optionalapi.StateForbidden}}}
	metricstest.Expect(t, collect(t, StateSources{APIs: apis}, "csi_provisioner_optional_api_available"),
		`csi_provisioner_optional_api_available{api="ReferenceGrant"} 1`,
		`csi_provisioner_optional_api_available{api="VolumeSnapshot"} 0`,
		`csi_provisioner_optional_api_available{api="VolumeSnapshotContent"} 0`)
	metricstest.Expect(t, collect(t, StateSources{APIs: apis[1:2]}, "csi_provisioner_optional_api_state"),
		`csi_provisioner_optional_api_state{api="VolumeSnapshot",state="available"} 0`,
		`csi_provisioner_optional_api_state{api="VolumeSnapshot",state="failed"} 0`,
		`csi_provisioner_optional_api_state{api="VolumeSnapshot",state="forbidden"} 0`,
		`csi_provisioner_optional_api_state{api="VolumeSnapshot",state="not_served"} 1`,
		`csi_provisioner_optional_api_state{api="VolumeSnapshot",state="not_synced"} 0`,
		`csi_provisioner_optional_api_state{api="VolumeSnapshotContent",state="available"} 0`,
		`csi_provisioner_optional_api_state{api="VolumeSnapshotContent",state="failed"} 0`,
		`csi_provisioner_optional_api_state{api="VolumeSnapshotContent",state="forbidden"} 1`,
		`csi_provisioner_optional_api_state{api="VolumeSnapshotContent",state="not_served"} 0`,
		`csi_provisioner_optional_api_state{api="VolumeSnapshotContent",state="not_synced"} 0`)
}

// TestStateGaugesFollowPrometheusNamingConventions: promlint, the
// linter of client_golang, finds nothing to say about any state gauge.
func TestStateGaugesFollowPrometheusNamingConventions(t *testing.T) {
	c := NewState(StateSources{Claims: fakeClaims{{"ReferenceGrantMissing", ago(time.Second)}},
		Attempts: fakeAttempts{{true, ago(time.Second)}},
		Sources:  &fakeSources{objs: []metav1.Object{heldClaim("c", ago(time.Second))}, read: []string{datasource.ClaimKind}},
		APIs:     []OptionalAPIs{fakeAPIs{{Name: "ReferenceGrant", State: optionalapi.StateAvailable}}}})
	if n := testutil.CollectAndCount(c); n != 15 {
		t.Errorf("collected %d series, want every gauge's", n)
	}
	metricstest.Lint(t, c)
}
