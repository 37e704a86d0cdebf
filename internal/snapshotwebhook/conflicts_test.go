package snapshotwebhook

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

	"github.com/xns-csi/csi-provisioner/internal/snapshotwebhook/snapshotvalidation"
	"github.com/xns-csi/csi-provisioner/test/discoverytest"
)

// TestDefaultClassConflictsAreReported: two defaults of one driver that
// both got past the default-class rule (two replicas' caches, or two
// creates back to back) are reported once per conflict, on each class,
// and counted while they last.
func TestDefaultClassConflictsAreReported(t *testing.T) {
	classes := []snapshotvalidation.Class{{Name: "a", Driver: "d1", Default: true}, {Name: "other", Driver: "d2", Default: true}}
	recorder := record.NewFakeRecorder(10)
	gauge := prometheus.NewGauge(prometheus.GaugeOpts{Name: "conflicts"})
	r := &conflictReporter{kind: snapshotvalidation.SnapshotClassKind, list: func() ([]snapshotvalidation.Class, error) { return classes, nil },
		event: recorder, gauge: gauge, ref: func(name string) *v1.ObjectReference { return &v1.ObjectReference{Name: name} }}
	told := func() []string {
		var out []string
		for len(recorder.Events) > 0 {
			e := <-recorder.Events
			if !strings.HasPrefix(e, "Warning "+ReasonMultipleDefaultClasses+" driver d1 has 2 default classes of kind VolumeSnapshotClass (a, b)") {
				t.Errorf("event %q", e)
			}
			out = append(out, e)
		}
		return out
	}

	r.check()
	if n := len(told()); n != 0 || testutil.ToFloat64(gauge) != 0 {
		t.Fatalf("one default per driver: %d events, gauge %v", n, testutil.ToFloat64(gauge))
	}
	classes = append(classes, snapshotvalidation.Class{Name: "b", Driver: "d1", Default: true})
	r.check()
	if n := len(told()); n != 2 || testutil.ToFloat64(gauge) != 1 {
		t.Fatalf("a second default of d1: %d events, gauge %v; want one on each class, 1", n, testutil.ToFloat64(gauge))
	}
	r.check()
	if n := len(told()); n != 0 {
		t.Errorf("the same conflict told again: %d events", n)
	}
	classes = slices.DeleteFunc(classes, func(c snapshotvalidation.Class) bool { return c.Name == "b" })
	r.check()
	if testutil.ToFloat64(gauge) != 0 {
		t.Errorf("gauge %v once the conflict is resolved, want 0", testutil.ToFloat64(gauge))
	}
	classes = append(classes, snapshotvalidation.Class{Name: "b", Driver: "d1", Default: true})
	r.check()
	if n := len(told()); n != 2 {
		t.Errorf("a new conflict: %d events, want 2", n)
	}
}

// TestAConflictPresentAtStartIsReported: two defaults of one driver exist
// when the webhook starts. The class cache's handlers may see them before
// the cache can be listed; the conflict is still reported once it can.
func TestAConflictPresentAtStartIsReported(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	client := fakeClient(t, class("gold", "a.csi.io", snapshotvalidation.DefaultSnapshotClassAnnotation),
		class("silver", "a.csi.io", snapshotvalidation.DefaultSnapshotClassAnnotation))
	c := newSnapshotClassCache(client, discoverytest.New(discoverytest.Resources("snapshot.storage.k8s.io/v1", snapshotClasses)))
	metrics, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	recorder := record.NewFakeRecorder(10)
	reportConflicts(c, snapshotvalidation.SnapshotClassKind, recorder, metrics)
	go c.api.Run(ctx)
	var events []string
	for len(events) < 2 {
		select {
		case e := <-recorder.Events:
			events = append(events, e)
		case <-time.After(10 * time.Second):
			t.Fatalf("events %q, want a %s on each of the 2 default classes", events, ReasonMultipleDefaultClasses)
		}
	}
	if got := testutil.ToFloat64(metrics.conflicts.WithLabelValues(snapshotvalidation.SnapshotClassKind.Name)); got != 1 {
		t.Errorf("conflicting drivers %v, want 1", got)
	}
}
