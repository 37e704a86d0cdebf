package validator

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
)

// TestEveryClaimOfABurstIsTold: the validator starts with 3,000 claims to
// warn at once and an API server that takes a millisecond to store each
// event, slower than the validator decides. Every claim ends up with its
// one event. (Issue 22, defect 3: client-go's event broadcaster drops what
// is past 1,000 queued, and the claims whose events it dropped were
// counted as told, and never told while their state stayed the same.)
func TestEveryClaimOfABurstIsTold(t *testing.T) {
	const n = 3000
	claims := make([]*v1.PersistentVolumeClaim, 0, n)
	for i := range n {
		claims = append(claims, newClaim(fmt.Sprintf("c-%04d", i), restoring("prod", "foo-backup")))
	}
	e := startEnv(t, withClaims(claims...), withEventLatency(time.Millisecond), undecided)

	reason := string(claimsource.ReasonGrantMissing)
	told := e.waitForEvents(n)
	var untold, twice int
	for _, c := range claims {
		switch told[c.Name][reason] {
		case 0:
			untold++
		case 1:
		default:
			twice++
		}
	}
	if untold > 0 || twice > 0 {
		t.Errorf("of %d claims, %d never got their %s event and %d got it more than once", n, untold, reason, twice)
	}
	if got := e.eventsTotal(reason); got != n {
		t.Errorf("events_total{reason=%s} = %v, want %d", reason, got, n)
	}
}

// waitForEvents waits until n claims have events, or until no event has
// been stored for a while (none is on its way), and returns
// eventsPerClaim.
func (e *env) waitForEvents(n int) map[string]map[string]int {
	e.t.Helper()
	const stalled = 5 * time.Second
	last, lastChange := -1, time.Now()
	for {
		told := e.eventsPerClaim()
		switch {
		case len(told) >= n:
			return told
		case len(told) != last:
			last, lastChange = len(told), time.Now()
		case time.Since(lastChange) > stalled:
			return told
		}
		time.Sleep(500 * time.Millisecond)
	}
}
