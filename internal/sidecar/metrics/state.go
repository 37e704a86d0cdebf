package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge"
)

// The state gauges: what is wrong now, where the counters say what
// happened (issue 26). They are computed at each scrape from the state the
// sidecar keeps anyway, so they cost nothing between scrapes and are never
// out of date. No claim, snapshot or namespace is a label: each label's
// values are a fixed set (refusal reasons, kinds, API names, states).
// The sidecar registers them while it provisions: under leader election,
// only the leader exports them.
var (
	waitingDesc = prometheus.NewDesc("csi_provisioner_waiting_claims",
		"Claims whose last provisioning attempt was refused, by the refusal's reason (the reason of their ProvisioningFailed event). "+
			"When it stays above zero: create what the claims wait for (a ReferenceGrant, a VolumeSnapshotLink, a ready snapshot), "+
			"or tell their owners: kubectl get events -A --field-selector reason=ProvisioningFailed.",
		[]string{"reason"}, nil)
	waitingOldestDesc = prometheus.NewDesc("csi_provisioner_waiting_claims_oldest_seconds",
		"Seconds since the claim waiting longest, among those last refused for reason, was created "+
			"(a pending claim waits from its creation, whatever its refusals' reasons). When high: that claim's owner has been waiting as long; "+
			"see its ProvisioningFailed events for what it needs.",
		[]string{"reason"}, nil)
	inFlightDesc = prometheus.NewDesc("csi_provisioner_inflight_create_volumes",
		"CreateVolume calls whose outcome is not known yet, by state: running (being sent, or its claim being checked) "+
			"or parked (its answer was lost or timed out, and it is sent again with the provisioning backoff). "+
			"Many parked: the CSI driver times out or is unreachable; check csi_sidecar_operations_seconds and the driver's logs.",
		[]string{"state"}, nil)
	inFlightOldestDesc = prometheus.NewDesc("csi_provisioner_inflight_create_volumes_oldest_seconds",
		"Seconds since the oldest CreateVolume call in flight, by state, was first sent. "+
			"Many times --timeout: the driver has not answered for that volume for as long, and its source stays protected; "+
			"check the driver's logs for the volume (the claim's events name it).",
		[]string{"state"}, nil)
	protectedDesc = prometheus.NewDesc("csi_provisioner_protected_sources",
		"Snapshots and claims carrying a source-protection finalizer, by kind (VolumeSnapshot, PersistentVolumeClaim): "+
			"a restore or clone from them may be in progress, or ended moments ago. Absent for a kind whose cache cannot be read.",
		[]string{"kind"}, nil)
	protectedOldestDesc = prometheus.NewDesc("csi_provisioner_protected_sources_oldest_seconds",
		"Seconds since this process first saw the longest-protected source of kind protected (a restart starts it again). "+
			"When high: claims restore or clone from it all the time, or one doing so is stuck: "+
			"see csi_provisioner_waiting_claims and csi_provisioner_inflight_create_volumes.",
		[]string{"kind"}, nil)
	deletionWaitingDesc = prometheus.NewDesc("csi_provisioner_protected_sources_deletion_waiting",
		"Protected snapshots and claims, by kind, whose deletion was requested and waits for the restores or clones from them to end.",
		[]string{"kind"}, nil)
	deletionWaitingOldestDesc = prometheus.NewDesc("csi_provisioner_protected_sources_deletion_waiting_oldest_seconds",
		"Seconds since the deletion of the protected source of kind waiting longest was requested. "+
			"When high: a claim restoring or cloning from it is stuck (see csi_provisioner_inflight_create_volumes), "+
			"or the sidecar may not remove the finalizer (its log says \"Cannot release data source\").",
		[]string{"kind"}, nil)
	// apis are csi_provisioner_optional_api_available and
	// csi_provisioner_optional_api_state.
	apis = stategauge.NewAPIs(stategauge.APIsConfig{Prefix: "csi_provisioner", Component: "sidecar",
		Names:  "ReferenceGrant, VolumeSnapshot, VolumeSnapshotContent, VolumeSnapshotLink, VolumeAttributesClass, VolumeAttachment",
		AtZero: "claims that need it are refused or retried"})
)

// The state label of in-flight calls.
const (
	stateRunning = "running"
	stateParked  = "parked"
)

// WaitingClaims are the claims refused at their last attempt
// (provisioner.Provisioner).
type WaitingClaims interface {
	EachWaitingClaim(visit func(reason string, since time.Time))
}

// Attempts are the CreateVolume calls whose outcome is unknown
// (inflight.Registry).
type Attempts interface {
	EachAttempt(visit func(parked bool, began time.Time))
}

// HeldSources are the sources source protection holds
// (sourceprotection.Protector); EachHeld returns the kinds it could read.
type HeldSources interface {
	EachHeld(visit func(kind string, obj metav1.Object)) (read []string)
}

// OptionalAPIs are caches of optional APIs (referencegrant.Checker,
// snapshotcache.Cache, linkcache.Cache, storagecache's).
type OptionalAPIs = stategauge.APIReporter

// StateSources are what the state gauges read; a nil one exports nothing.
type StateSources struct {
	// Now is the clock of the ages; time.Now when nil.
	Now      func() time.Time
	Claims   WaitingClaims
	Attempts Attempts
	Sources  HeldSources
	APIs     []OptionalAPIs
}

// NewState returns the collector of the state gauges:
//
//   - csi_provisioner_waiting_claims{reason} and
//     csi_provisioner_waiting_claims_oldest_seconds{reason};
//   - csi_provisioner_inflight_create_volumes{state} and
//     csi_provisioner_inflight_create_volumes_oldest_seconds{state}, state
//     running or parked;
//   - csi_provisioner_protected_sources{kind},
//     csi_provisioner_protected_sources_oldest_seconds{kind},
//     csi_provisioner_protected_sources_deletion_waiting{kind} and
//     csi_provisioner_protected_sources_deletion_waiting_oldest_seconds{kind};
//   - csi_provisioner_optional_api_available{api} and
//     csi_provisioner_optional_api_state{api, state}.
//
// An _oldest_seconds series is there only while its count is not zero.
func NewState(src StateSources) prometheus.Collector {
	if src.Now == nil {
		src.Now = time.Now
	}
	return &stateCollector{src: src, seen: map[types.UID]seenHeld{}}
}

type stateCollector struct {
	src StateSources
	// mu guards seen: scrapes may overlap.
	mu sync.Mutex
	// seen is, for each source held at the last scrape, since when this
	// collector has seen it held: the objects do not say since when.
	seen map[types.UID]seenHeld
}

type seenHeld struct {
	kind  string
	since time.Time
}

// Describe implements prometheus.Collector.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{waitingDesc, waitingOldestDesc, inFlightDesc, inFlightOldestDesc, protectedDesc,
		protectedOldestDesc, deletionWaitingDesc, deletionWaitingOldestDesc} {
		ch <- d
	}
	apis.Describe(ch)
}

// Collect implements prometheus.Collector.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	now := c.src.Now()
	if c.src.Claims != nil {
		waiting := stategauge.Cohorts{}
		c.src.Claims.EachWaitingClaim(func(reason string, since time.Time) { waiting.Add(since, reason) })
		waiting.Emit(ch, now, waitingDesc, waitingOldestDesc)
	}
	if c.src.Attempts != nil {
		attempts := stategauge.Cohorts{}
		attempts.Ensure(stateRunning)
		attempts.Ensure(stateParked)
		c.src.Attempts.EachAttempt(func(parked bool, began time.Time) {
			state := stateRunning
			if parked {
				state = stateParked
			}
			attempts.Add(began, state)
		})
		attempts.Emit(ch, now, inFlightDesc, inFlightOldestDesc)
	}
	if c.src.Sources != nil {
		c.collectHeld(ch, now)
	}
	apis.Collect(ch, c.src.APIs)
}

// collectHeld emits the gauges of the held sources, and remembers since
// when each is seen held.
func (c *stateCollector) collectHeld(ch chan<- prometheus.Metric, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	held, deleting := stategauge.Cohorts{}, stategauge.Cohorts{}
	seen := make(map[types.UID]seenHeld, len(c.seen))
	read := c.src.Sources.EachHeld(func(kind string, obj metav1.Object) {
		s, ok := c.seen[obj.GetUID()]
		if !ok {
			s = seenHeld{kind: kind, since: now}
		}
		seen[obj.GetUID()] = s
		held.Add(s.since, kind)
		if deletion := obj.GetDeletionTimestamp(); deletion != nil {
			deleting.Add(deletion.Time, kind)
		}
	})
	readable := map[string]bool{}
	for _, kind := range read {
		readable[kind] = true
		held.Ensure(kind)
		deleting.Ensure(kind)
	}
	// A kind that could not be read this time keeps its sources' times.
	for uid, s := range c.seen {
		if !readable[s.kind] {
			seen[uid] = s
		}
	}
	c.seen = seen
	held.Emit(ch, now, protectedDesc, protectedOldestDesc)
	deleting.Emit(ch, now, deletionWaitingDesc, deletionWaitingOldestDesc)
}
