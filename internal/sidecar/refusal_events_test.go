package sidecar

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestAnUnchangedRefusalIsAnnouncedOnce: a claim waiting for a grant is
// re-queued by every change of the grants of its snapshot's namespace.
// Each attempt would cost it a Provisioning and a ProvisioningFailed event;
// under churn those repeats queue behind the event client's rate limit and
// client-go's per-object spam filter, and a claim's newest refusal then
// arrives minutes late, or never (the soak of docs/reliability.md). The
// claim is decided again on each change, but told only when the decision
// changes.
func TestAnUnchangedRefusalIsAnnouncedOnce(t *testing.T) {
	e := startEnv(t, oneProvisioningWorker(), knownSnapshots("prod/snap"))
	e.createSnapshot("prod", "snap", true)
	data := e.createClaim("test", "data", fromSnapshot("prod", "snap"))
	const notGranted = `no ReferenceGrant in namespace "prod" allows`
	e.waitForEvent(data, v1.EventTypeWarning, "ProvisioningFailed", notGranted)

	// Grants for other snapshots of prod: each re-queues data, and the
	// sidecar has decided on it once the barrier after the probe is seen.
	for i := range 5 {
		other := fmt.Sprintf("other-%d", i)
		e.createSnapshot("prod", other, true)
		e.createGrant("prod", "grant-"+other, "test", other)
		e.probeGrant("test", "prod", other)
	}
	e.claimsSeen()
	if n := e.eventCount(data, v1.EventTypeWarning, "ProvisioningFailed", notGranted); n != 1 {
		t.Errorf("%d ProvisioningFailed events for want of a grant, want 1: an unchanged refusal was announced again", n)
	}

	e.createGrant("prod", "bar", "test", "snap")
	e.waitForPV(data)
	e.waitForEvent(data, v1.EventTypeNormal, "ProvisioningSucceeded", "")
	if n := e.eventCount(data, v1.EventTypeNormal, "Provisioning", ""); n != 2 {
		t.Errorf("%d Provisioning events, want 2: the refused attempt and the one that succeeded", n)
	}
}
