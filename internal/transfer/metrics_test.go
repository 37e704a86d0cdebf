package transfer

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge/metricstest"
	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// fixedClock is a clock that says it is now.
type fixedClock struct {
	clock.RealClock
	now time.Time
}

func (c fixedClock) Now() time.Time { return c.now }

// TestStateGauges: the requests by kind and phase, with the age of the
// oldest of each phase not ended (issue 26), and the transfers stuck past
// their point of no return (issue 23: a metric for them), as the cache
// shows them at the scrape.
func TestStateGauges(t *testing.T) {
	c := unstarted(t, record.NewFakeRecorder(10))
	c.requestsSynced = func() bool { return true } // filled by hand below
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c.clock = fixedClock{now: now}
	ages := map[string]time.Duration{"new": time.Minute, "waiting": time.Hour, "stuck": 2 * time.Hour,
		"bound-elsewhere": 30 * time.Minute, "moving": 3 * time.Hour, "attention-before": 10 * time.Minute, "done": 5 * time.Hour}
	request := func(name, kind string, phase transferv1alpha1.Phase, rec *transferv1alpha1.TransferRecord, reason string) *transferv1alpha1.StorageTransferRequest {
		r := &transferv1alpha1.StorageTransferRequest{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "prod",
			CreationTimestamp: metav1.NewTime(now.Add(-ages[name]))},
			Spec:   transferv1alpha1.StorageTransferRequestSpec{Source: transferv1alpha1.TransferSource{Kind: kind, Name: name}},
			Status: transferv1alpha1.StorageTransferRequestStatus{Phase: phase, Record: rec}}
		if reason != "" {
			r.Status.Conditions = []metav1.Condition{{Type: transferv1alpha1.ConditionTransferred, Status: metav1.ConditionFalse, Reason: reason}}
		}
		if rec != nil && rec.PointOfNoReturn {
			r.Status.Conditions = append(r.Status.Conditions, metav1.Condition{Type: transferv1alpha1.ConditionPastPointOfNoReturn, Status: metav1.ConditionTrue})
		}
		return r
	}
	past := &transferv1alpha1.TransferRecord{PointOfNoReturn: true}
	claim, snap := transferv1alpha1.KindPersistentVolumeClaim, transferv1alpha1.KindVolumeSnapshot
	for _, r := range []*transferv1alpha1.StorageTransferRequest{
		request("new", claim, "", nil, ""),
		request("waiting", claim, transferv1alpha1.PhaseMatched, nil, plan.ReasonSourceInUse),
		request("stuck", claim, transferv1alpha1.PhaseTransferring, past, plan.ReasonNeedsAttention),
		request("bound-elsewhere", snap, transferv1alpha1.PhaseTransferring, past, plan.ReasonBoundElsewhere),
		request("moving", snap, transferv1alpha1.PhaseTransferring, past, plan.ReasonTransferring),
		request("attention-before", snap, transferv1alpha1.PhaseTransferring, &transferv1alpha1.TransferRecord{}, plan.ReasonNeedsAttention),
		request("done", snap, transferv1alpha1.PhaseCompleted, past, plan.ReasonCompleted),
	} {
		if err := c.requests.GetStore().Add(r); err != nil {
			t.Fatal(err)
		}
	}
	want := `
# HELP storage_transfer_requests Number of StorageTransferRequests, by kind of object and phase (as this replica's caches show them: read the leader's).
# TYPE storage_transfer_requests gauge
storage_transfer_requests{kind="PersistentVolumeClaim",phase="Matched"} 1
storage_transfer_requests{kind="PersistentVolumeClaim",phase="Pending"} 1
storage_transfer_requests{kind="PersistentVolumeClaim",phase="Transferring"} 1
storage_transfer_requests{kind="VolumeSnapshot",phase="Completed"} 1
storage_transfer_requests{kind="VolumeSnapshot",phase="Transferring"} 3
# HELP storage_transfer_requests_oldest_seconds Seconds since the oldest StorageTransferRequest of kind in phase Pending, Matched or Transferring was created (absent for a phase without requests, and for Completed and Failed). When high: Pending waits for its accept, Matched for its source to be free, Transferring for a step; the request's Transferred condition says what.
# TYPE storage_transfer_requests_oldest_seconds gauge
storage_transfer_requests_oldest_seconds{kind="PersistentVolumeClaim",phase="Matched"} 3600
storage_transfer_requests_oldest_seconds{kind="PersistentVolumeClaim",phase="Pending"} 60
storage_transfer_requests_oldest_seconds{kind="PersistentVolumeClaim",phase="Transferring"} 7200
storage_transfer_requests_oldest_seconds{kind="VolumeSnapshot",phase="Transferring"} 10800
# HELP storage_transfer_stuck_past_point_of_no_return Number of transfers past their point of no return (the source deleted) that wait for a person: their Transferred condition says NeedsAttention, BoundToUnexpectedObject or ReturnRefused.
# TYPE storage_transfer_stuck_past_point_of_no_return gauge
storage_transfer_stuck_past_point_of_no_return{kind="PersistentVolumeClaim"} 1
storage_transfer_stuck_past_point_of_no_return{kind="VolumeSnapshot"} 1
`
	if err := testutil.CollectAndCompare(c.Collector(), strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	metricstest.Lint(t, c.Collector())
}

// TestThePointOfNoReturnIsACondition: a request past its point of no
// return says so in a condition of its own, also while it gives the object
// back.
func TestThePointOfNoReturnIsACondition(t *testing.T) {
	c := unstarted(t, record.NewFakeRecorder(10))
	c.requestsSynced = func() bool { return true } // filled by hand below
	api := c.cfg.API
	r := &transferv1alpha1.StorageTransferRequest{ObjectMeta: metav1.ObjectMeta{Name: "move", Namespace: "prod"},
		Status: transferv1alpha1.StorageTransferRequestStatus{Record: &transferv1alpha1.TransferRecord{Step: string(plan.ActionBegin)}}}
	r, err := api.TransferV1alpha1().StorageTransferRequests("prod").Create(t.Context(), r, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := &plan.Observed{Request: r}
	for _, tc := range []struct {
		record *transferv1alpha1.TransferRecord
		want   string
	}{
		{&transferv1alpha1.TransferRecord{Step: string(plan.ActionLockSource)}, ""},
		{&transferv1alpha1.TransferRecord{Step: string(plan.ActionDeleteSource), PointOfNoReturn: true}, "handed over, or given back"},
		{&transferv1alpha1.TransferRecord{Step: string(plan.ActionStartReturn), PointOfNoReturn: true, Returning: true}, "given back to the source namespace"},
	} {
		step := plan.Step{Action: plan.Action(tc.record.Step), Phase: transferv1alpha1.PhaseTransferring, Reason: plan.ReasonTransferring, Message: "m", Record: tc.record}
		if r, err = c.writeStatus(t.Context(), r, o, step); err != nil {
			t.Fatal(err)
		}
		cond := meta.FindStatusCondition(r.Status.Conditions, transferv1alpha1.ConditionPastPointOfNoReturn)
		switch {
		case tc.want == "" && cond != nil:
			t.Errorf("At %s: condition %+v, want none", tc.record.Step, cond)
		case tc.want != "" && (cond == nil || cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, tc.want)):
			t.Errorf("At %s: condition %+v, want True saying %q", tc.record.Step, cond, tc.want)
		}
	}
}
