package transfer

// Adversarial review of issue 26 (state gauges and alerts) for the
// storage-transfer-controller.

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/record"

	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge/metricstest"
)

// TestReview26FailedTransfersSeriesExistsBeforeTheFirstFailure: the alert
// StorageTransfersFailing is `increase(storage_transfer_transfers_total
// {phase="Failed"}[1h]) > 0`. The counter's series is created by the first
// failure, already at 1, so Prometheus' first sample of it is 1 and
// increase() over any window never sees that failure: the first Failed
// transfer after each start (or leader change) never fires the alert, and
// transfers are rare, so that is most failures. The series of every kind
// and final phase must exist at 0 from the start (WithLabelValues at
// NewMetrics), as client_golang recommends for counters with known labels.
func TestReview26FailedTransfersSeriesExistsBeforeTheFirstFailure(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	metricstest.Expect(t, metricstest.Gather(t, reg, "storage_transfer_transfers_total"),
		`storage_transfer_transfers_total{kind="PersistentVolumeClaim",phase="Completed"} 0`,
		`storage_transfer_transfers_total{kind="PersistentVolumeClaim",phase="Failed"} 0`,
		`storage_transfer_transfers_total{kind="VolumeSnapshot",phase="Completed"} 0`,
		`storage_transfer_transfers_total{kind="VolumeSnapshot",phase="Failed"} 0`)
}

// TestReview26AControllerWhoseCachesDoNotRunSaysNothingOfStuckTransfers:
// run.go registers the transfer collector before leader election, so a
// standby (whose caches never start) and a new leader whose caches have not
// synced export storage_transfer_stuck_past_point_of_no_return{kind} 0: "no
// transfer is stuck", which they cannot know. docs/monitoring.md says only
// the replica that works exports the state gauges; the webhook's held
// gauge is absent until its caches sync. At a leader change, the new
// leader's 0 until its sync is what the (critical)
// StorageTransferStuckPastPointOfNoReturn sees: its `for` restarts.
func TestReview26AControllerWhoseCachesDoNotRunSaysNothingOfStuckTransfers(t *testing.T) {
	c := unstarted(t, record.NewFakeRecorder(10))
	metricstest.Expect(t, metricstest.Collect(t, c.Collector(), "storage_transfer_stuck_past_point_of_no_return"))
}
