package snapshotwebhook

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
)

// TestMadeUpOperationsAddNoSeries: anyone who reaches the webhook's Service
// can post AdmissionReviews with any operation. Each made-up value must not
// become a series of its own, held for the process's life.
func TestMadeUpOperationsAddNoSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	h := &Handler{Admitter: &Admitter{}, Metrics: metrics}
	post := func(op admissionv1.Operation) {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, snapshotPath, bytes.NewReader(reviewOf(t, request(t, op, snapshotsGVR, snapshot(fromClaim("data")), nil))))
		r.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK {
			t.Fatalf("operation %q answered %d: %s", op, rec.Code, rec.Body)
		}
	}
	post(admissionv1.Create)
	for i := range 100 {
		post(admissionv1.Operation(fmt.Sprintf("MADE-UP-%d", i)))
	}
	// CREATE and other, in each of the two metrics.
	if n := testutil.CollectAndCount(reg); n != 4 {
		t.Errorf("%d series after 100 made-up operations, want 4 (CREATE and other, requests and latency)", n)
	}
	if got := testutil.ToFloat64(metrics.requests.WithLabelValues(snapshots, operationOther, resultAllowed, "")); got != 100 {
		t.Errorf("requests{operation=%q} = %v, want 100", operationOther, got)
	}
}
