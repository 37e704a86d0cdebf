package sidecar

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const noGrantEvent = `no ReferenceGrant in namespace "prod" allows PersistentVolumeClaims in namespace "test"`

// TestKEPTestPlanCases are the four e2e cases of KEP-3294's test plan.
func TestKEPTestPlanCases(t *testing.T) {
	tests := []struct {
		name          string
		grant         bool
		claimNS       string
		refNamespace  string // spec.dataSourceRef.namespace; "" leaves it unset
		wantProvision bool
	}{
		{"a snapshot in another namespace is restored when a ReferenceGrant allows it", true, "test", "prod", true},
		{"a snapshot in another namespace is not restored without a ReferenceGrant", false, "test", "prod", false},
		{"a snapshot in the same namespace named without namespace needs no grant", false, "prod", "", true},
		{"a snapshot in the same namespace named with an explicit namespace needs a grant", false, "prod", "prod", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startEnv(t, knownSnapshots("prod/foo-backup"))
			e.createSnapshot("prod", "foo-backup", true)
			if tt.grant {
				e.createGrant("prod", "bar", tt.claimNS, "foo-backup")
			}
			claim := e.createClaim(tt.claimNS, "foo-testing", fromSnapshot(tt.refNamespace, "foo-backup"))
			if !tt.wantProvision {
				e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", "no ReferenceGrant in namespace \"prod\"")
				e.noPV(claim)
				if n := len(e.createRequests(claim)); n != 0 {
					t.Errorf("driver got %d CreateVolume calls, want 0", n)
				}
				return
			}
			e.waitForPV(claim)
			assertRestoredFrom(t, e, claim, snapshotHandle("prod", "foo-backup"))
		})
	}
}

func TestGrantCreatedLaterRequeuesTheClaimAtOnce(t *testing.T) {
	// The retry backoff of startEnv is one hour: the claim can only be
	// provisioned in this test if the grant's arrival re-queues it.
	e := startEnv(t, knownSnapshots("prod/foo-backup"))
	e.createSnapshot("prod", "foo-backup", true)
	claim := e.createClaim("test", "foo-testing", fromSnapshot("prod", "foo-backup"))
	ev := e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", noGrantEvent)
	if !strings.Contains(ev.Message, "to {group: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: foo-backup}") {
		t.Errorf("event %q does not say which grant is missing", ev.Message)
	}
	e.noPV(claim)

	e.createGrant("prod", "bar", "test", "") // no name: every snapshot in prod
	e.waitForPV(claim)
	assertRestoredFrom(t, e, claim, snapshotHandle("prod", "foo-backup"))

	if got := e.metric("cross_namespace_persistentvolumeclaim_provision_total", "storage_class", className); got != 1 {
		t.Errorf("cross_namespace_persistentvolumeclaim_provision_total{fast} = %v, want 1", got)
	}
	if got := e.metric("cross_namespace_persistentvolumeclaim_provision_failed_total", "storage_class", className); got < 1 {
		t.Errorf("cross_namespace_persistentvolumeclaim_provision_failed_total{fast} = %v, want the refused attempt counted", got)
	}
}

func TestGrantForAnotherSnapshotOrNamespaceDoesNotAllow(t *testing.T) {
	e := startEnv(t, knownSnapshots("prod/foo-backup"))
	e.createSnapshot("prod", "foo-backup", true)
	e.createGrant("prod", "other-snapshot", "test", "bar-backup")
	e.createGrant("prod", "other-namespace", "staging", "foo-backup")
	e.createGrant("test", "wrong-side", "test", "foo-backup") // grants live in the snapshot's namespace
	claim := e.createClaim("test", "foo-testing", fromSnapshot("prod", "foo-backup"))
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", noGrantEvent)
	e.noPV(claim)
}

func TestGrantRevokedBeforeProvisioningIsRefused(t *testing.T) {
	e := startEnv(t, knownSnapshots("prod/foo-backup"))
	e.createSnapshot("prod", "foo-backup", true)
	e.createGrant("prod", "bar", "test", "foo-backup")
	probe := e.probeGrant("test", "prod", "foo-backup")
	e.deleteGrant("prod", "bar")
	probe.waitRevoked() // the deletion reaches the cache, as it would before a later claim
	claim := e.createClaim("test", "foo-testing", fromSnapshot("prod", "foo-backup"))
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", noGrantEvent)
	e.noPV(claim)
}

func TestGrantRevokedDuringCreateVolumeLetsTheAttemptFinish(t *testing.T) {
	// KEP-3294, Security, case 2: an attempt already past the check may finish.
	e, claim, release := startStory1InFlight(t)
	probe := e.probeGrant("test", "prod", "foo-backup")
	e.deleteGrant("prod", "bar")
	// Only once the sidecar's cache refuses the reference does the attempt
	// show that it is not checked again.
	probe.waitRevoked()
	close(release)
	e.waitForPV(claim)
}

func TestGrantDeletedAfterProvisioningLeavesTheVolume(t *testing.T) {
	e := startEnv(t, knownSnapshots("prod/foo-backup"), oneProvisioningWorker())
	e.createSnapshot("prod", "foo-backup", true)
	e.createGrant("prod", "bar", "test", "foo-backup")
	claim := e.createClaim("test", "foo-testing", fromSnapshot("prod", "foo-backup"))
	pv := e.waitForPV(claim)
	probe := e.probeGrant("test", "prod", "foo-backup")

	e.deleteGrant("prod", "bar")
	// The deletion re-queues the claims waiting on grants in prod: the probe
	// and the claim (no PV controller binds it here). The one worker then
	// decides on both before it provisions the barrier's claim.
	probe.waitRevoked()
	e.claimsSeen()
	if _, err := e.kube.CoreV1().PersistentVolumes().Get(e.ctx, pv.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("PV is gone after the grant was deleted: %v", err)
	}
	if _, ok := e.driver.Volumes()[pv.Spec.CSI.VolumeHandle]; !ok || len(e.driver.DeleteVolumeRequests()) != 0 {
		t.Fatal("the volume was deleted after the grant was deleted")
	}
}

func TestReferenceGrantCRDInstalledLaterWorksWithoutRestart(t *testing.T) {
	e := startEnv(t, grantCRDAbsent(), knownSnapshots("prod/foo-backup", "test/local"))
	e.createSnapshot("prod", "foo-backup", true)
	e.createSnapshot("test", "local", true)

	// Everything else provisions while the CRD is absent.
	plain := e.createClaim("test", "plain")
	local := e.createClaim("test", "local-restore", fromSnapshot("", "local"))
	e.waitForPV(plain)
	e.waitForPV(local)

	cross := e.createClaim("test", "foo-testing", fromSnapshot("prod", "foo-backup"))
	e.waitForEvent(cross, v1.EventTypeWarning, "ProvisioningFailed", "is the CRD installed?")
	e.noPV(cross)

	e.grantAPI.serve(grantResources) // the CRD is installed
	e.createGrant("prod", "bar", "test", "foo-backup")
	e.waitForPV(cross)
}

func TestFeatureGateOffRefusesCrossNamespaceClaims(t *testing.T) {
	e := startEnv(t, gateOff(), knownSnapshots("prod/foo-backup"))
	e.createSnapshot("prod", "foo-backup", true)
	e.createGrant("prod", "bar", "test", "foo-backup")
	cross := e.createClaim("test", "foo-testing", fromSnapshot("prod", "foo-backup"))
	e.waitForEvent(cross, v1.EventTypeWarning, "CrossNamespaceSourceDisabled", "feature gate is off")
	same := e.createClaim("prod", "same", fromSnapshot("", "foo-backup"))
	e.waitForPV(same)
	e.noPV(cross)
	if n := len(e.createRequests(cross)); n != 0 {
		t.Errorf("driver got %d CreateVolume calls with the gate off, want 0", n)
	}
}

// assertRestoredFrom checks the claim's one CreateVolume asked for the
// snapshot.
func assertRestoredFrom(t *testing.T, e *env, claim *v1.PersistentVolumeClaim, handle string) {
	t.Helper()
	reqs := e.createRequests(claim)
	if len(reqs) == 0 {
		t.Fatal("no CreateVolume for the claim")
	}
	if got := reqs[len(reqs)-1].GetVolumeContentSource().GetSnapshot().GetSnapshotId(); got != handle {
		t.Errorf("CreateVolume content source snapshot = %q, want %q", got, handle)
	}
}
