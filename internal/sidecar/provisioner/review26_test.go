package provisioner

// Adversarial review of issue 26 (state gauges): the waiting map of
// refusals (csi_provisioner_waiting_claims{reason} and its
// _oldest_seconds).

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge/metricstest"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/metrics"
)

// grantsDuring is the grant cache of a world that, while the provisioner
// reads it (in the middle of an attempt, after Provision checked that the
// claim exists), lets the informer's handler run: what the sidecar's claim
// handler (forgetDone) does on another goroutine while a worker provisions.
type grantsDuring struct {
	w      *world
	during func()
	once   sync.Once
}

func (g *grantsDuring) Check(ref referencegrant.Reference) referencegrant.Decision {
	g.once.Do(g.during)
	return g.w.Check(ref)
}

// waitingGauges scrapes the waiting-claims gauges of w's provisioner.
func waitingGauges(t *testing.T, w *world) []string {
	t.Helper()
	state := metrics.NewState(metrics.StateSources{Claims: w.prov, Now: func() time.Time { return w.clock.Add(2 * time.Hour) }})
	return metricstest.Collect(t, state)
}

// TestReview26ClaimGoneDuringARefusedAttemptDoesNotWaitForever: a claim
// deleted while an attempt that ends refused is running has its informer
// event handled (ForgetClaim) before the attempt notes its refusal.
// refusals.note then re-adds the claim to the waiting map, and no later
// event removes it: the controller library drops the key of a claim
// that no longer exists ("claim in work queue no longer exists") without
// calling Provision again, so nothing ever ends the wait. The gauge shows
// a waiting claim whose age grows until the process restarts, and
// CSIProvisionerClaimsWaiting fires after an hour and never resolves.
//
// The validator guards the same race (Controller.sync re-checks the cache
// after tell); the provisioner does not. (A claim bound by another process
// in the same window is re-added too, but its next update, e.g. the PV
// controller's status.phase=Bound, reaches ClaimChanged and heals it; a
// deleted claim has no next event.)
func TestReview26ClaimGoneDuringARefusedAttemptDoesNotWaitForever(t *testing.T) {
	prodSnap, prodContent := snapshot("prod")
	for name, gone := range map[string]func(w *world, claim *v1.PersistentVolumeClaim){
		"deleted": func(w *world, claim *v1.PersistentVolumeClaim) {
			must(t, w.indexers[claimsGVR].Delete(claim))
			w.prov.ForgetClaim(claim.UID) // forgetDone's DeleteFunc
		},
	} {
		t.Run(name, func(t *testing.T) {
			claim := ours(restoring("prod", "snap"))
			w := newWorld(t, frameworkCase{objects: objects(claim, prodSnap, prodContent)})
			w.prov.policy.Grants = &grantsDuring{w: w, during: func() { gone(w, claim) }}
			if got := w.callProvision(claim, ""); !strings.Contains(got, "refused ReferenceGrantMissing") {
				t.Fatalf("attempt: %s, want a refusal", got)
			}
			// The claim is gone; no event for it will come again.
			if got := waitingGauges(t, w); len(got) != 0 {
				t.Errorf("2h after the claim was %s, the gauges still show it waiting:\n  %s", name, strings.Join(got, "\n  "))
			}
		})
	}
}

// TestReview26ConcurrentScrapesWhileClaimsAreRefusedAndForgotten is a
// hypothesis checked and found safe (run with -race): scrapes of the
// waiting gauges while claims are refused, end their wait and are
// forgotten concurrently neither race nor count a claim twice; after
// every claim is forgotten the map is empty.
func TestReview26ConcurrentScrapesWhileClaimsAreRefusedAndForgotten(t *testing.T) {
	var r refusals
	start := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	state := metrics.NewState(metrics.StateSources{Claims: waitingOf{&r}, Now: func() time.Time { return start }})
	const claims, rounds = 64, 200
	var wg sync.WaitGroup
	for i := range claims {
		wg.Go(func() {
			uid := types.UID(fmt.Sprintf("uid-%d", i))
			for j := range rounds {
				r.note(uid, "fast", &RefusedError{Reason: string(claimsource.ReasonGrantMissing)}, start.Add(time.Duration(j)*time.Second))
				if j%3 == 0 {
					r.note(uid, "fast", nil, start)
				}
			}
			r.forget(uid)
		})
	}
	for range 4 {
		wg.Go(func() {
			for range rounds {
				for _, line := range metricstest.Collect(t, state, "csi_provisioner_waiting_claims") {
					var n int
					if _, err := fmt.Sscan(line[strings.LastIndex(line, " ")+1:], &n); err != nil || n > claims {
						t.Errorf("scrape: %s", line)
					}
				}
			}
		})
	}
	wg.Wait()
	if got := metricstest.Collect(t, state); len(got) != 0 {
		t.Errorf("after every claim was forgotten: %q", got)
	}
}

// waitingOf exposes a bare refusals as the gauges' WaitingClaims.
type waitingOf struct{ r *refusals }

func (w waitingOf) EachWaitingClaim(visit func(reason string, since time.Time)) {
	w.r.eachWaiting(visit)
}
