package validator

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record/util"
	"k8s.io/client-go/tools/reference"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Metrics are the validator's own metrics.
type Metrics struct {
	events *prometheus.CounterVec
	// reg takes the state gauges while the controller runs (Controller.Run).
	reg prometheus.Registerer
}

// NewMetrics creates the metrics and registers them with reg:
// volume_data_source_validator_events_total{reason}, the Warning events
// the API server stored, by reason (the subsystem is upstream's metrics').
// The state gauges (stateCollector) join them while the controller runs.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{reg: reg, events: prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "volume_data_source_validator", Name: "events_total",
		Help: "Number of Warning events stored on PersistentVolumeClaims, by reason (one per claim and state).",
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

// notices writes the Warning events, one per claim and state: a claim told
// something is not told it again on every resync or unrelated update, only
// when what it would be told changes, or after it was fine in between.
// A claim counts as told once the API server has stored its event, not
// before: client-go's event broadcaster drops events past 1,000 queued
// (a start with thousands of claims to warn fills it at the events
// client's --kube-api-qps), and a claim counted as told on being queued
// and then dropped would never be told while its state stayed the same.
// So each event is written by the worker deciding the claim, through the
// events' own client and its rate limiter; the error of a failed write
// leaves the claim untold, for the queue to retry (issue 22, defect 3).
// Memory is one hash, reason and time per claim being warned about.
type notices struct {
	events  typedcorev1.EventsGetter
	metrics *Metrics
	// clock says when a claim is first told, for the gauges' ages.
	clock clock.PassiveClock

	mu   sync.Mutex
	told map[types.UID]told
	// unsure are the events whose write failed, by claim: the API server
	// may have stored one whose answer was lost, so the retry of the same
	// state writes the same name, and an AlreadyExists is the event stored.
	unsure map[types.UID]attempt
}

// told is what a claim was last told: the state, its reason, and since
// when the claim has been told one warning after another, whatever their
// reasons (a new state told keeps it; a claim fine in between, forgotten,
// starts again).
type told struct {
	state  uint64
	reason string
	since  time.Time
}

// attempt is an event write of a state under a name.
type attempt struct {
	state uint64
	name  string
}

func newNotices(events typedcorev1.EventsGetter, metrics *Metrics, clock clock.PassiveClock) *notices {
	return &notices{events: events, metrics: metrics, clock: clock, told: map[types.UID]told{}, unsure: map[types.UID]attempt{}}
}

// tell writes out's Warning on claim unless the claim was last told the
// same, and counts the claim as told once the event is stored. It returns
// the write's error; the claim is then not told.
func (n *notices) tell(ctx context.Context, claim *v1.PersistentVolumeClaim, out Outcome) error {
	state := stateOf(out)
	n.mu.Lock()
	last, wasTold := n.told[claim.UID]
	unsure, retry := n.unsure[claim.UID]
	n.mu.Unlock()
	if wasTold && last.state == state {
		return nil
	}
	name := util.GenerateEventName(claim.Name, time.Now().UnixNano())
	if retry && unsure.state == state {
		name = unsure.name // the same event, if the last write was stored after all
	}
	keysAndValues := []any{"pvc", klog.KObj(claim), "reason", out.Reason, "message", out.Message}
	if out.Cause != nil {
		keysAndValues = append(keysAndValues, "cause", out.Cause)
	}
	klog.FromContext(ctx).V(2).Info("Telling the claim", keysAndValues...)
	if err := n.write(ctx, claim, out, name); err != nil && !apierrors.IsAlreadyExists(err) {
		n.mu.Lock()
		n.unsure[claim.UID] = attempt{state: state, name: name}
		n.mu.Unlock()
		return fmt.Errorf("writing the %s event on the claim: %w", out.Reason, err)
	}
	n.mu.Lock()
	since := n.clock.Now()
	if last, ok := n.told[claim.UID]; ok {
		since = last.since
	}
	n.told[claim.UID] = told{state: state, reason: out.Reason, since: since}
	delete(n.unsure, claim.UID)
	n.mu.Unlock()
	n.metrics.emitted(out.Reason)
	return nil
}

// write creates out's Warning event on claim, as client-go's event
// recorder makes it (record.EventRecorder), with the validator as its
// source.
func (n *notices) write(ctx context.Context, claim *v1.PersistentVolumeClaim, out Outcome, name string) error {
	ref, err := reference.GetReference(scheme.Scheme, claim)
	if err != nil {
		return err
	}
	now := metav1.Now()
	event := &v1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: claim.Namespace},
		InvolvedObject: *ref,
		Type:           v1.EventTypeWarning,
		Reason:         out.Reason,
		Message:        out.Message,
		FirstTimestamp: now,
		LastTimestamp:  now,
		Count:          1,
		Source:         v1.EventSource{Component: Component},

		ReportingController: Component,
	}
	_, err = n.events.Events(claim.Namespace).Create(ctx, event, metav1.CreateOptions{})
	return err
}

// forget drops what the claim was told: it is fine now, bound, or gone.
func (n *notices) forget(uid types.UID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.told, uid)
	delete(n.unsure, uid)
}

// eachTold calls visit with the reason each claim was last told, and since
// when it has been told, for the warned-claims gauges.
func (n *notices) eachTold(visit func(reason string, since time.Time)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, t := range n.told {
		visit(t.reason, t.since)
	}
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
