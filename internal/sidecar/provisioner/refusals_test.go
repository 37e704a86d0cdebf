package provisioner

import (
	"errors"
	"slices"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
)

// snapshotsByGET is a snapshot reader that reads with GETs or from watched
// caches.
type snapshotsByGET bool

func (snapshotsByGET) GetSnapshot(string, string) (*snapv1.VolumeSnapshot, error) { return nil, nil }
func (snapshotsByGET) GetContent(string) (*snapv1.VolumeSnapshotContent, error)   { return nil, nil }
func (d snapshotsByGET) ReadsDirectly() bool                                      { return bool(d) }

// TestRefusalsKeptOnlyWhileAChangeRequeuesTheClaim: a refusal is repeated
// silently only when the change that could end it re-queues the claim.
func TestRefusalsKeptOnlyWhileAChangeRequeuesTheClaim(t *testing.T) {
	for _, tc := range []struct {
		reason  claimsource.Reason
		byGET   bool
		skipped bool
	}{
		{claimsource.ReasonGrantMissing, false, true},
		{claimsource.ReasonGrantMissing, true, true},
		{claimsource.ReasonLinkNotFound, true, true},
		{claimsource.ReasonSnapshotNotReady, false, true},
		{claimsource.ReasonSnapshotNotReady, true, false},
		{claimsource.ReasonSnapshotContentNotFound, true, false},
		// Caches that cannot be read may recover without an event for
		// the claim's source: the controller's backoff retries them.
		{claimsource.ReasonGrantUnavailable, false, false},
		{claimsource.ReasonSnapshotAPIUnavailable, false, false},
		{claimsource.ReasonLinkAPIUnavailable, false, false},
		{claimsource.ReasonSourceClaimUnreadable, false, false},
	} {
		p := &Provisioner{policy: claimsource.Policy{Snapshots: snapshotsByGET(tc.byGET)}}
		p.refusals.note("uid", "fast", &RefusedError{Reason: string(tc.reason), Message: "m"}, time.Time{})
		last, noted := p.refusals.get("uid")
		if skipped := noted && p.requeuedOnChange(last); skipped != tc.skipped {
			t.Errorf("%s (read with GETs: %v): repeated silently = %v, want %v", tc.reason, tc.byGET, skipped, tc.skipped)
		}
	}

	var r refusals
	r.note("uid", "fast", &RefusedError{Reason: string(claimsource.ReasonGrantMissing)}, time.Time{})
	r.note("uid", "fast", errors.New("CSI CreateVolume: unavailable"), time.Time{})
	if _, ok := r.get("uid"); ok {
		t.Error("an attempt that ends otherwise than refused still counts as refused")
	}
}

// TestChangedRefusalsArePaced: the first change of a claim's refusal is
// told at once, later ones after an interval doubling from 10 s to 5 min,
// which keeps a claim whose refusal flaps within client-go's per-object
// spam filter (25 events, then one per 5 minutes).
func TestChangedRefusalsArePaced(t *testing.T) {
	var r refusals
	start := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	var waits []time.Duration
	now := start
	for range 9 {
		r.note("uid", "fast", &RefusedError{Reason: string(claimsource.ReasonGrantMissing)}, now)
		last, _ := r.get("uid")
		waits = append(waits, last.nextAt().Sub(now))
		now = last.nextAt()
	}
	want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second,
		5 * time.Minute, 5 * time.Minute, 5 * time.Minute}
	if !slices.Equal(waits, want) {
		t.Errorf("intervals between refusals told = %v, want %v", waits, want)
	}
}

// TestEveryRefusalCountsAsWaiting: a claim waits, for the gauges, from
// its first refusal in a row whatever the reasons, also those that are not
// paced (a cache that cannot be read), until an attempt ends otherwise.
func TestEveryRefusalCountsAsWaiting(t *testing.T) {
	var r refusals
	start := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	waiting := func() []string {
		var out []string
		r.eachWaiting(func(reason string, since time.Time) { out = append(out, reason+" since "+since.Format(time.TimeOnly)) })
		return out
	}
	r.note("uid", "fast", &RefusedError{Reason: string(claimsource.ReasonGrantUnavailable)}, start)
	if _, paced := r.get("uid"); paced {
		t.Error("a refusal of an unreadable cache is paced")
	}
	r.note("uid", "fast", &RefusedError{Reason: string(claimsource.ReasonGrantMissing)}, start.Add(time.Minute))
	if got, want := waiting(), []string{"ReferenceGrantMissing since 00:00:00"}; !slices.Equal(got, want) {
		t.Errorf("waiting = %q, want %q", got, want)
	}
	r.note("uid", "fast", errors.New("CSI CreateVolume: unavailable"), start.Add(2*time.Minute))
	if got := waiting(); len(got) != 0 {
		t.Errorf("waiting = %q after an attempt that was not refused, want nothing", got)
	}
}
