package snapshotwebhook

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge"
)

// The webhook's state gauges (issue 26), computed at each scrape from its
// caches: the snapshots the DELETE guard holds, and whether each cache can
// be read. Every replica has the same caches, so each exports the same
// values (take the max across replicas, not the sum).
var (
	heldDesc = prometheus.NewDesc("snapshot_validation_webhook_guard_held_snapshots",
		"VolumeSnapshots whose deletion the DELETE guard denies now, as its caches show them: a pending claim the "+
			"snapshot-controller does not wait for (another namespace's, one naming dataSourceRef.namespace, or through a "+
			"VolumeSnapshotLink), allowed and handed to a provisioner, restores from each. Absent without "+
			"--guard-cross-namespace-restores and while the guard's caches have not synced.",
		nil, nil)
	heldOldestDesc = prometheus.NewDesc("snapshot_validation_webhook_guard_held_snapshots_oldest_seconds",
		"Seconds since the oldest claim holding a snapshot was created. When high: that restore is slow or stuck "+
			"(see the claim's events and the sidecar's csi_provisioner_waiting_claims); its snapshot cannot be deleted "+
			"until the claim is bound or deleted, or the ReferenceGrant allowing it is revoked.",
		nil, nil)
	// apis are snapshot_validation_webhook_optional_api_available and
	// snapshot_validation_webhook_optional_api_state.
	apis = stategauge.NewAPIs(stategauge.APIsConfig{Prefix: "snapshot_validation_webhook", Component: "webhook",
		Names: "VolumeSnapshotClass, VolumeGroupSnapshotClass; the DELETE guard's ReferenceGrant, VolumeSnapshotLink, " +
			"PersistentVolumeClaim, PersistentVolume, StorageClass",
		AtZero: "what needs it is allowed unchecked"})
)

// stateSources are what the webhook's state gauges read.
type stateSources struct {
	// now is the clock of the ages; time.Now when nil.
	now func() time.Time
	// guard is the DELETE guard; nil when it is off.
	guard *DeleteGuard
	// apis are the caches the webhook reads.
	apis []stategauge.APIReporter
}

// stateCollector collects the webhook's state gauges:
//
//   - snapshot_validation_webhook_guard_held_snapshots and
//     snapshot_validation_webhook_guard_held_snapshots_oldest_seconds
//     (DeleteGuard.eachHeld), no labels; the age only while some are
//     held;
//   - snapshot_validation_webhook_optional_api_available{api} and
//     snapshot_validation_webhook_optional_api_state{api, state}.
type stateCollector struct{ src stateSources }

func newStateCollector(src stateSources) prometheus.Collector {
	if src.now == nil {
		src.now = time.Now
	}
	return stateCollector{src: src}
}

// Describe implements prometheus.Collector.
func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- heldDesc
	ch <- heldOldestDesc
	apis.Describe(ch)
}

// Collect implements prometheus.Collector.
func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	if c.src.guard != nil {
		held := stategauge.Cohorts{}
		if c.src.guard.eachHeld(func(since time.Time) { held.Add(since) }) {
			held.Ensure()
			held.Emit(ch, c.src.now(), heldDesc, heldOldestDesc)
		}
	}
	apis.Collect(ch, c.src.apis)
}

// syncedCache reports an informer of a core API, always served, as the
// optional APIs' caches report theirs: available once it has synced,
// not_synced until then (also while the API server refuses its list: an
// informer does not say why it has not synced).
type syncedCache struct {
	name   string
	synced func() bool
}

// APIStatus implements stategauge.APIReporter.
func (s syncedCache) APIStatus() []optionalapi.Status {
	state := optionalapi.StateNotSynced
	if s.synced() {
		state = optionalapi.StateAvailable
	}
	return []optionalapi.Status{{Name: s.name, State: state}}
}

// APIStatus reports whether the class cache can be read.
func (c *classCache) APIStatus() []optionalapi.Status { return []optionalapi.Status{c.api.Status()} }
