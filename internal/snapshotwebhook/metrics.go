package snapshotwebhook

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	admissionv1 "k8s.io/api/admission/v1"
)

// The results of an admission request, the metrics' result label.
const (
	resultAllowed = "allowed"
	resultDenied  = "denied"
	// resultError is a request that got an HTTP error instead of an
	// AdmissionReview: kube-apiserver applies the failurePolicy.
	resultError = "error"
)

// Metrics are the webhook's own metrics.
type Metrics struct {
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	conflicts *prometheus.GaugeVec
	// reg takes the state gauges (exportState).
	reg prometheus.Registerer
}

// NewMetrics creates the metrics and registers them with reg:
//
//   - snapshot_validation_webhook_admission_requests_total{resource,
//     operation, result, reason}: operation is CREATE, UPDATE, DELETE,
//     CONNECT, other (any other value a caller posts) or empty (an HTTP
//     error before the review was read); result is allowed, denied or error;
//     reason is, for a denial, the field of the first rule broken (e.g.
//     spec.source) or cross-namespace-restore (the DELETE guard), for an
//     allowed request the webhook could not decide (undecodable,
//     classes-unavailable, restores-unknown) or did not validate
//     (not-validated) why, for an error what was wrong with the HTTP
//     request; empty otherwise.
//   - snapshot_validation_webhook_admission_duration_seconds{resource,
//     operation}: from the request's arrival to its response being
//     written.
//   - snapshot_validation_webhook_default_class_conflicts{kind}: the
//     drivers with more than one default class of kind
//     (VolumeSnapshotClass, VolumeGroupSnapshotClass) in the cache.
//
// The state gauges (stateCollector) join them once the caches are built.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "snapshot_validation_webhook", Name: "admission_requests_total",
			Help: "Admission requests by resource, operation, result (allowed, denied, error) and reason.",
		}, []string{"resource", "operation", "result", "reason"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "snapshot_validation_webhook", Name: "admission_duration_seconds",
			Help:    "Time to answer an admission request, by resource and operation.",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2},
		}, []string{"resource", "operation"}),
		conflicts: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: "snapshot_validation_webhook", Name: "default_class_conflicts",
			Help: "Drivers with more than one default class of kind, as the webhook's cache shows them.",
		}, []string{"kind"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.conflicts} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// operationOther is the operation label of a request whose operation is
// not one of admission.k8s.io/v1's.
const operationOther = "other"

// operationLabel is the operation label of op: a label takes only known
// values, as whoever reaches the webhook's Service can post any operation,
// and each new value would be a series held for the process's life.
func operationLabel(op admissionv1.Operation) string {
	switch op {
	case admissionv1.Create, admissionv1.Update, admissionv1.Delete, admissionv1.Connect, "":
		return string(op)
	default:
		return operationOther
	}
}

// observe counts one request and its latency; a nil Metrics counts
// nothing.
func (m *Metrics) observe(resource string, operation admissionv1.Operation, result, reason string, took time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(resource, operationLabel(operation), result, reason).Inc()
	m.latency.WithLabelValues(resource, operationLabel(operation)).Observe(took.Seconds())
}

// exportState registers the state gauges of src; a nil Metrics exports
// nothing.
func (m *Metrics) exportState(src stateSources) error {
	if m == nil {
		return nil
	}
	return m.reg.Register(newStateCollector(src))
}
