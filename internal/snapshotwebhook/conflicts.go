package snapshotwebhook

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/xns-csi/csi-provisioner/internal/snapshotwebhook/snapshotvalidation"
)

// ReasonMultipleDefaultClasses is the reason of the Warning event on each
// class of a driver that has more than one default.
const ReasonMultipleDefaultClasses = "MultipleDefaultClasses"

// conflictReporter reports the defaults that slipped past the default-class
// rule. The rule reads each replica's informer cache, so two defaults for
// one driver created back to back (or through two replicas) can both be
// admitted before either cache shows the other. The snapshot-controller
// then fails every snapshot of that driver that names no class. The
// reporter sees the conflict in the cache once it is there: a Warning
// event on each class in it, once per conflict (from each replica, and
// again after a restart: what was told is kept in memory), and the gauge
// of conflicting drivers.
type conflictReporter struct {
	kind  snapshotvalidation.ClassKind
	ref   func(name string) *v1.ObjectReference
	list  ClassLister
	event record.EventRecorder
	gauge prometheus.Gauge

	mu sync.Mutex
	// told are the classes warned about in their current conflict.
	told map[string]bool
}

// handler re-checks the classes on every change of the cache.
func (r *conflictReporter) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{AddFunc: func(any) { r.check() }, UpdateFunc: func(_, _ any) { r.check() },
		DeleteFunc: func(any) { r.check() }}
}

// check finds the drivers with more than one default, warns on each class
// of a conflict not told yet, and sets the gauge. A class that leaves its
// conflict is told again if it enters another.
func (r *conflictReporter) check() {
	classes, err := r.list()
	if err != nil {
		return
	}
	defaults := map[string][]string{} // driver → its default classes
	for _, c := range classes {
		if c.Default {
			defaults[c.Driver] = append(defaults[c.Driver], c.Name)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	conflicting, now := 0, map[string]bool{}
	for _, driver := range slices.Sorted(maps.Keys(defaults)) {
		names := defaults[driver]
		if len(names) < 2 {
			continue
		}
		conflicting++
		slices.Sort(names)
		for _, name := range names {
			if r.told[name] {
				now[name] = true
				continue
			}
			ref := r.ref(name)
			if ref == nil {
				continue // gone from the cache since the list: told if it is back
			}
			now[name] = true
			r.event.Event(ref, v1.EventTypeWarning, ReasonMultipleDefaultClasses, fmt.Sprintf(
				"driver %s has %d default classes of kind %s (%s): the snapshot-controller fails every snapshot of the driver that names no class; "+
					"remove the %s annotation from all but one. The webhook admits one default per driver, but decides from each "+
					"replica's cache, so defaults created at the same moment can both be admitted",
				driver, len(names), r.kind.Name, strings.Join(names, ", "), r.kind.Annotation))
		}
	}
	r.told = now
	r.gauge.Set(float64(conflicting))
}
