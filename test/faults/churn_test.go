//go:build faults

package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// watchLag is how long after its deletion returned a grant may still be in
// the sidecar's cache: every check reads the cache (docs/cross-namespace-restores.md, Revocation),
// which learns of the deletion through its watch. The churn's gaps are
// longer, so a check in a gap is still caught.
const watchLag = time.Second

// grantWindow is when one grant existed: from before its create call to
// after its delete call returned (zero: it still exists).
type grantWindow struct {
	name     string
	from, to time.Time
}

// allows reports whether a check between created and sent (the claim's
// creation and the driver's receipt of its first CreateVolume, which
// follows the check) can have found the grant in the cache.
func (w grantWindow) allows(created, sent time.Time) bool {
	return !w.from.After(sent) && (w.to.IsZero() || !created.After(w.to.Add(watchLag)))
}

// churnSeed is FAULTS_SEED, or the time.
func churnSeed(t *testing.T) uint64 {
	if s := os.Getenv("FAULTS_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("FAULTS_SEED: %v", err)
		}
		return seed
	}
	return uint64(time.Now().UnixNano())
}

// TestGrantChurn: while claims are created every 150 ms, the grant that
// lets dst restore src's snapshot is created and deleted at random (on for
// 0.3-1.5 s, off for 1.5-3 s). Every claim of dst that was provisioned
// must have been checked while a grant existed: the driver's receipt of
// its first CreateVolume comes after the check, the claim's creation
// before it, and that interval must meet a grant's life (its end extended
// by watchLag). A last grant is kept so that every claim of dst binds.
func TestGrantChurn(t *testing.T) {
	seed := churnSeed(t)
	t.Logf("seed %d (FAULTS_SEED=%d repeats this churn)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 14)) //nolint:gosec // test randomness
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo))) }

	sc := newScenario(t, "churn", scenarioOptions{noGrant: true})
	var windows []grantWindow
	on := false
	toggle := func() {
		if !on {
			w := grantWindow{name: fmt.Sprintf("churn-%02d", len(windows)), from: time.Now()}
			sc.grant(t, w.name)
			windows = append(windows, w)
		} else {
			w := &windows[len(windows)-1]
			retry(t, "deleting grant "+w.name, func(ctx context.Context) error {
				return world.Gateway.GatewayV1().ReferenceGrants(sc.src).Delete(ctx, w.name, metav1.DeleteOptions{})
			})
			w.to = time.Now()
		}
		on = !on
	}
	start := time.Now()
	pace := time.NewTicker(150 * time.Millisecond) // the load's pace, not a wait for a result
	defer pace.Stop()
	next := time.Now().Add(between(time.Second, 2*time.Second))
	kinds := []kind{xrestore, xrestore, xrestore, plain, xdenied}
	for range 60 {
		<-pace.C
		sc.burstOf(t, kinds, 1)
		if time.Now().After(next) {
			toggle()
			if on {
				next = time.Now().Add(between(300*time.Millisecond, 1500*time.Millisecond))
			} else {
				next = time.Now().Add(between(1500*time.Millisecond, 3*time.Second))
			}
		}
	}
	if !on {
		toggle()
	}
	t.Logf("burst and churn took %v", time.Since(start))
	sc.reconcile(t)
	t.Logf("settled and reconciled after %v", time.Since(start))

	first := map[string]time.Time{}
	for _, r := range sc.st.callLog(t) {
		if _, seen := first[r.Name]; r.Method == "CreateVolume" && r.Phase == "start" && !seen {
			first[r.Name] = r.Time
		}
	}
	checked, inGap := 0, 0
	for _, c := range sc.claims {
		if c.kind != xrestore {
			continue
		}
		sent, ok := first[c.volumeName()]
		if !ok {
			t.Errorf("%s is bound but the driver never received its CreateVolume", c)
			continue
		}
		checked++
		allowed, createdInGrant := false, false
		for _, w := range windows {
			allowed = allowed || w.allows(c.created, sent)
			createdInGrant = createdInGrant || w.allows(c.created, c.created)
		}
		if !createdInGrant {
			inGap++
		}
		if !allowed {
			t.Errorf("%s (created %s) was sent to the driver at %s, when no grant existed: grants %v",
				c, c.created.Format(time.StampMicro), sent.Format(time.StampMicro), windows)
		}
	}
	t.Logf("faults: CHURN %d grants created and %d deleted; %d cross-namespace claims provisioned, each while a grant allowed it; %d of them created while no grant existed",
		len(windows), len(windows)-1, checked, inGap)
}

// TestGrantWindowAllows pins the churn's check down: it must refuse a
// check that can only have run while no grant existed.
func TestGrantWindowAllows(t *testing.T) {
	at := func(ms int) time.Time {
		return time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
	}
	w := grantWindow{from: at(1000), to: at(2000)}
	tests := map[string]struct {
		created, sent int
		window        grantWindow
		want          bool
	}{
		"created and sent while the grant existed":                  {created: 1200, sent: 1300, window: w, want: true},
		"created before the grant, sent after its creation":         {created: 500, sent: 1100, window: w, want: true},
		"created and sent before the grant existed":                 {created: 500, sent: 900, window: w},
		"created within the watch lag after the deletion":           {created: 2900, sent: 3100, window: w, want: true},
		"created after the deletion and its watch lag":              {created: 3100, sent: 3200, window: w},
		"a grant that still exists allows every later check":        {created: 9000, sent: 9100, window: grantWindow{from: at(1000)}, want: true},
		"a grant that still exists does not allow an earlier check": {created: 100, sent: 200, window: grantWindow{from: at(1000)}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.window.allows(at(tc.created), at(tc.sent)); got != tc.want {
				t.Errorf("allows(created %d ms, sent %d ms) = %v, want %v", tc.created, tc.sent, got, tc.want)
			}
		})
	}
}
