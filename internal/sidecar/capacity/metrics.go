package capacity

import (
	"github.com/prometheus/client_golang/prometheus"
)

// The gauges upstream exports, with its names and help texts.
var (
	goalDesc = prometheus.NewDesc("csistoragecapacities_desired_goal",
		"Number of CSIStorageCapacity objects that are supposed to be managed automatically.", nil, nil)
	currentDesc = prometheus.NewDesc("csistoragecapacities_desired_current",
		"Number of CSIStorageCapacity objects that exist and are supposed to be managed automatically.", nil, nil)
	obsoleteDesc = prometheus.NewDesc("csistoragecapacities_obsolete",
		"Number of CSIStorageCapacity objects that exist and will be deleted automatically. Objects that exist and may need an update are not considered obsolete and therefore not included in this value.", nil, nil)
)

// collector computes the gauges from the controller's state when scraped.
type collector struct{ c *Controller }

// Describe implements prometheus.Collector.
func (m collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- goalDesc
	ch <- currentDesc
	ch <- obsoleteDesc
}

// Collect implements prometheus.Collector: the objects the last sweep
// planned (goal), those of them that exist (current), and the existing
// ones of keys that are not planned (obsolete; duplicates are not).
func (m collector) Collect(ch chan<- prometheus.Metric) {
	goal, current, obsolete := m.c.counts()
	ch <- prometheus.MustNewConstMetric(goalDesc, prometheus.GaugeValue, float64(goal))
	ch <- prometheus.MustNewConstMetric(currentDesc, prometheus.GaugeValue, float64(current))
	ch <- prometheus.MustNewConstMetric(obsoleteDesc, prometheus.GaugeValue, float64(obsolete))
}

func (c *Controller) counts() (goal, current, obsolete int) {
	cached, err := c.cachedObjects(nil)
	if err != nil {
		return 0, 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	existing := map[Key]bool{}
	for _, obj := range c.withWritten(cached, nil) {
		if !c.policy.Manages(obj) {
			continue
		}
		k := keyOf(obj)
		if !c.desired[k] {
			obsolete++
		} else if !existing[k] {
			current++
		}
		existing[k] = true
	}
	return len(c.desired), current, obsolete
}
