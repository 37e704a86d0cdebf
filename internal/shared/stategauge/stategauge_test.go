package stategauge

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge/metricstest"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var (
	countDesc  = prometheus.NewDesc("test_things", "Things by kind and phase.", []string{"kind", "phase"}, nil)
	oldestDesc = prometheus.NewDesc("test_things_oldest_seconds", "Seconds since the oldest thing began.", []string{"kind", "phase"}, nil)
	totalDesc  = prometheus.NewDesc("test_total_things", "Things.", nil, nil)
	oldestAll  = prometheus.NewDesc("test_total_things_oldest_seconds", "Seconds since the oldest thing began.", nil, nil)
)

// collector sends what collect sends, described by descs.
type collector struct {
	descs   []*prometheus.Desc
	collect func(ch chan<- prometheus.Metric)
}

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) { c.collect(ch) }

func TestCohortsCountByLabelValuesWithTheAgeOfTheOldest(t *testing.T) {
	cs := Cohorts{}
	cs.Ensure("Snapshot", "Pending")
	cs.Ensure("Claim", "Matched")
	cs.Add(now.Add(-time.Minute), "Claim", "Matched")
	cs.Add(now.Add(-time.Hour), "Claim", "Matched")
	cs.Add(now.Add(time.Second), "Claim", "Transferring") // a start on another clock, ahead of ours
	got := metricstest.Collect(t, collector{descs: []*prometheus.Desc{countDesc, oldestDesc},
		collect: func(ch chan<- prometheus.Metric) { cs.Emit(ch, now, countDesc, oldestDesc) }})
	metricstest.Expect(t, got,
		`test_things{kind="Claim",phase="Matched"} 2`,
		`test_things_oldest_seconds{kind="Claim",phase="Matched"} 3600`,
		`test_things{kind="Claim",phase="Transferring"} 1`,
		`test_things_oldest_seconds{kind="Claim",phase="Transferring"} 0`,
		`test_things{kind="Snapshot",phase="Pending"} 0`)
}

func TestCohortsWithoutLabelsAreOneSeries(t *testing.T) {
	emit := func(cs Cohorts) []string {
		return metricstest.Collect(t, collector{descs: []*prometheus.Desc{totalDesc, oldestAll},
			collect: func(ch chan<- prometheus.Metric) { cs.Emit(ch, now, totalDesc, oldestAll) }})
	}
	cs := Cohorts{}
	cs.Ensure()
	metricstest.Expect(t, emit(cs), `test_total_things 0`)
	cs.Add(now.Add(-90 * time.Second))
	metricstest.Expect(t, emit(cs), `test_total_things 1`, `test_total_things_oldest_seconds 90`)
	metricstest.Expect(t, emit(Cohorts{})) // nothing ensured, nothing added: no series
}

type reporter []optionalapi.Status

func (r reporter) APIStatus() []optionalapi.Status { return r }

// TestAPIsAreNamedAfterThePrefixAndLintClean: each API is available or
// says why not, under the binary's prefix, and promlint, the linter of
// client_golang, finds nothing to say about the gauges.
func TestAPIsAreNamedAfterThePrefixAndLintClean(t *testing.T) {
	apis := NewAPIs(APIsConfig{Prefix: "test_binary", Component: "test binary", Names: "ReferenceGrant, VolumeSnapshotLink",
		AtZero: "nothing is checked"})
	c := collector{collect: func(ch chan<- prometheus.Metric) {
		apis.Collect(ch, []APIReporter{reporter{{Name: "ReferenceGrant", State: optionalapi.StateAvailable}},
			reporter{{Name: "VolumeSnapshotLink", State: optionalapi.StateForbidden}}})
	}}
	described := make(chan *prometheus.Desc, 2)
	apis.Describe(described)
	close(described)
	for d := range described {
		c.descs = append(c.descs, d)
	}
	metricstest.Expect(t, metricstest.Collect(t, c, "test_binary_optional_api_available"),
		`test_binary_optional_api_available{api="ReferenceGrant"} 1`,
		`test_binary_optional_api_available{api="VolumeSnapshotLink"} 0`)
	metricstest.Expect(t, metricstest.Collect(t, c, "test_binary_optional_api_state")[5:],
		`test_binary_optional_api_state{api="VolumeSnapshotLink",state="available"} 0`,
		`test_binary_optional_api_state{api="VolumeSnapshotLink",state="failed"} 0`,
		`test_binary_optional_api_state{api="VolumeSnapshotLink",state="forbidden"} 1`,
		`test_binary_optional_api_state{api="VolumeSnapshotLink",state="not_served"} 0`,
		`test_binary_optional_api_state{api="VolumeSnapshotLink",state="not_synced"} 0`)
	metricstest.Lint(t, c)
}
