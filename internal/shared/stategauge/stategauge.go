// Package stategauge holds what the binaries' state gauges are made of
// (issue 26): gauges that say what is wrong now, computed at each scrape
// from the state a binary keeps anyway, so they cost nothing between
// scrapes and are never out of date. No object or namespace is a label:
// each label's values are a fixed set (reasons, kinds, phases, API names,
// states). Cohorts counts things by label values with the age of the
// oldest (the `_oldest_seconds` series); APIs are the availability and
// state of the optional APIs a binary reads.
package stategauge

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
)

// Cohorts counts things by label values, with the start of the oldest of
// each. Make one with a literal: Cohorts{}.
type Cohorts map[string]*cohort

type cohort struct {
	labels []string
	count  int
	oldest time.Time
}

// labelSep joins label values into a key; no label value holds it.
const labelSep = "\xff"

func (cs Cohorts) ensure(labels []string) *cohort {
	key := strings.Join(labels, labelSep)
	c, ok := cs[key]
	if !ok {
		c = &cohort{labels: labels}
		cs[key] = c
	}
	return c
}

// Ensure makes the series of labels be there, with a count of 0 while
// nothing is added under them.
func (cs Cohorts) Ensure(labels ...string) { cs.ensure(labels) }

// Add counts one thing under labels, begun at since.
func (cs Cohorts) Add(since time.Time, labels ...string) {
	c := cs.ensure(labels)
	if c.count == 0 || since.Before(c.oldest) {
		c.oldest = since
	}
	c.count++
}

// Emit sends the count of each labels to count and, while it is not zero,
// the seconds from its oldest's start to now to oldest (never negative: a
// start may be the API server's clock).
func (cs Cohorts) Emit(ch chan<- prometheus.Metric, now time.Time, count, oldest *prometheus.Desc) {
	for _, c := range cs {
		ch <- Gauge(count, float64(c.count), c.labels...)
		if c.count > 0 {
			ch <- Gauge(oldest, max(now.Sub(c.oldest).Seconds(), 0), c.labels...)
		}
	}
}

// Gauge is a gauge's sample, for a collector.
func Gauge(desc *prometheus.Desc, value float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, value, labels...)
}

// APIReporter is a cache of optional APIs that reports their state
// (referencegrant.Checker, linkcache.Cache and the other caches built on
// optionalapi).
type APIReporter interface {
	APIStatus() []optionalapi.Status
}

// APIsConfig names and explains a binary's optional-API gauges.
type APIsConfig struct {
	// Prefix begins the gauges' names: <Prefix>_optional_api_available and
	// <Prefix>_optional_api_state.
	Prefix string
	// Component is the binary the help tells the reader to look at (its
	// RBAC, its log), e.g. "sidecar".
	Component string
	// Names lists the APIs the binary may report, for the help.
	Names string
	// AtZero says what the binary does while an API is unavailable, for
	// the help, e.g. "claims that need it are refused or retried".
	AtZero string
}

// APIs are the gauges of the optional APIs a binary reads:
// <prefix>_optional_api_available{api}, 1 when the API is served and its
// cache synced, else 0, and <prefix>_optional_api_state{api, state}, 1 for
// its state (optionalapi.States) and 0 for the others.
type APIs struct {
	available, state *prometheus.Desc
}

// NewAPIs returns the gauges cfg describes.
func NewAPIs(cfg APIsConfig) APIs {
	return APIs{
		available: prometheus.NewDesc(cfg.Prefix+"_optional_api_available",
			"1 when the optional API's cache ("+cfg.Names+") is served and synced, 0 otherwise. "+
				"At 0, "+cfg.AtZero+": "+cfg.Prefix+"_optional_api_state says why.",
			[]string{"api"}, nil),
		state: prometheus.NewDesc(cfg.Prefix+"_optional_api_state",
			"1 for the optional API's current state, 0 for the others: available, not_served (install its CRD), "+
				"forbidden (grant the "+cfg.Component+"'s RBAC list and watch on it), not_synced (its first list has not completed: "+
				"the API server is slow or unreachable), failed (discovery fails; see the "+cfg.Component+"'s log).",
			[]string{"api", "state"}, nil),
	}
}

// Describe sends the gauges' descriptions.
func (a APIs) Describe(ch chan<- *prometheus.Desc) {
	ch <- a.available
	ch <- a.state
}

// Collect sends the gauges of every API the reporters report.
func (a APIs) Collect(ch chan<- prometheus.Metric, reporters []APIReporter) {
	for _, r := range reporters {
		for _, s := range r.APIStatus() {
			ch <- Gauge(a.available, boolValue(s.State == optionalapi.StateAvailable), s.Name)
			for _, state := range optionalapi.States {
				ch <- Gauge(a.state, boolValue(s.State == state), s.Name, string(state))
			}
		}
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
