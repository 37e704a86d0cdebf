package validator

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge"
)

// The validator's state gauges (issue 26), computed at each scrape from
// what it keeps anyway: the claims it has warned and whose state has not
// changed since, and whether each optional API can be read.
var (
	warnedDesc = prometheus.NewDesc("volume_data_source_validator_warned_claims",
		"Claims told a Warning event whose state has not changed since, by the event's reason: "+
			"nothing will fill them from their data source as they are. When it stays above zero: "+
			"kubectl get events -A --field-selector reason=<reason> says what each needs (a VolumePopulator, a ReferenceGrant, a fixed spelling).",
		[]string{"reason"}, nil)
	warnedOldestDesc = prometheus.NewDesc("volume_data_source_validator_warned_claims_oldest_seconds",
		"Seconds since the claim warned longest, among those last told reason, was first told "+
			"(warnings in a row count as one, whatever their reasons; a restart or a new leader starts it again). "+
			"When high: that claim's owner has not acted on its events; a *Unavailable reason is the validator's own cache "+
			"(see volume_data_source_validator_optional_api_state).",
		[]string{"reason"}, nil)
	// apis are volume_data_source_validator_optional_api_available and
	// volume_data_source_validator_optional_api_state.
	apis = stategauge.NewAPIs(stategauge.APIsConfig{Prefix: "volume_data_source_validator", Component: "validator",
		Names: "VolumePopulator, ReferenceGrant, VolumeSnapshotLink",
		AtZero: "claims that need it are told nothing (VolumePopulator) or told that the validator cannot tell " +
			"(ReferenceGrantUnavailable, VolumeSnapshotLinkAPIUnavailable)"})
)

// stateCollector collects the validator's state gauges:
//
//   - volume_data_source_validator_warned_claims{reason} and
//     volume_data_source_validator_warned_claims_oldest_seconds{reason}
//     (notices), a reason's series only while a claim was last told it;
//   - volume_data_source_validator_optional_api_available{api} and
//     volume_data_source_validator_optional_api_state{api, state}.
type stateCollector struct{ c *Controller }

// Describe implements prometheus.Collector.
func (s stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- warnedDesc
	ch <- warnedOldestDesc
	apis.Describe(ch)
}

// Collect implements prometheus.Collector.
func (s stateCollector) Collect(ch chan<- prometheus.Metric) {
	warned := stategauge.Cohorts{}
	s.c.notices.eachTold(func(reason string, since time.Time) { warned.Add(since, reason) })
	warned.Emit(ch, s.c.clock.Now(), warnedDesc, warnedOldestDesc)
	var reporters []stategauge.APIReporter
	for _, cache := range s.c.optionalCaches() {
		reporters = append(reporters, cache)
	}
	apis.Collect(ch, reporters)
}

// exportState registers the state gauges with the metrics' registry and
// returns what unregisters them; nothing without metrics.
func (c *Controller) exportState() (unexport func(), err error) {
	if c.metrics == nil {
		return func() {}, nil
	}
	state := stateCollector{c}
	if err := c.metrics.reg.Register(state); err != nil {
		return nil, err
	}
	return func() { c.metrics.reg.Unregister(state) }, nil
}
