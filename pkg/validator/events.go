package validator

import (
	"context"
	"hash/fnv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// Metrics are the validator's own counters.
type Metrics struct {
	events *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them with reg:
// volume_data_source_validator_events_total{reason}, the Warning events
// emitted by reason (the subsystem is upstream's metrics').
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{events: prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "volume_data_source_validator", Name: "events_total",
		Help: "Number of Warning events emitted on PersistentVolumeClaims, by reason (one per claim and state).",
	}, []string{"reason"})}
	if err := reg.Register(m.events); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Metrics) emitted(reason string) {
	if m != nil {
		m.events.WithLabelValues(reason).Inc()
	}
}

// notices emits the Warning events, one per claim and state: a claim told
// something is not told it again on every resync or unrelated update, only
// when what it would be told changes, or after it was fine in between.
// Memory is one hash per claim being warned about.
type notices struct {
	recorder record.EventRecorder
	metrics  *Metrics

	mu   sync.Mutex
	told map[types.UID]uint64
}

func newNotices(recorder record.EventRecorder, metrics *Metrics) *notices {
	return &notices{recorder: recorder, metrics: metrics, told: map[types.UID]uint64{}}
}

// tell emits out's Warning on claim unless the claim was last told the
// same.
func (n *notices) tell(ctx context.Context, claim *v1.PersistentVolumeClaim, out Outcome) {
	state := stateOf(out)
	n.mu.Lock()
	if last, ok := n.told[claim.UID]; ok && last == state {
		n.mu.Unlock()
		return
	}
	n.told[claim.UID] = state
	n.mu.Unlock()
	klog.FromContext(ctx).V(2).Info("Telling the claim", "pvc", klog.KObj(claim), "reason", out.Reason, "message", out.Message)
	n.recorder.Event(claim, v1.EventTypeWarning, out.Reason, out.Message)
	n.metrics.emitted(out.Reason)
}

// forget drops what the claim was told: it is fine now, bound, or gone.
func (n *notices) forget(uid types.UID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.told, uid)
}

// stateOf is the hash of what a claim is told.
func stateOf(out Outcome) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(out.Reason))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(out.Message))
	return h.Sum64()
}

// remembered is how many claims are remembered as told.
func (n *notices) remembered() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.told)
}
