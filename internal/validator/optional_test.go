package validator

import (
	"net/http"
	"strings"
	"testing"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
)

// TestVolumePopulatorCRDInstalledLater: without the VolumePopulator CRD the
// validator runs, says so in /readyz, and tells populator-kind claims
// nothing (unknown is not unrecognized); once the CRD is served it decides
// them, with no restart.
func TestVolumePopulatorCRDInstalledLater(t *testing.T) {
	e := startEnv(t, withoutPopulatorCRD)
	e.createClaim(newClaim("hello", populatedBy("hello.example.com", "Hello")))
	e.createClaim(newClaim("typo", populatedBy("hello.example.com", "Helo")))
	e.decidedAs("hello", Wait)
	e.decidedAs("typo", Wait)
	e.toldNothing()
	if code, body := e.readyz(); code != http.StatusOK || !strings.Contains(body, "VolumePopulator: VolumePopulator API (populator.storage.k8s.io/v1beta1/volumepopulators) is not served") {
		t.Errorf("/readyz = %d %q, want 200 saying the VolumePopulator API is not served", code, body)
	}

	e.createPopulator(hello) // stored, not yet served
	e.serve(true, true, true)
	e.decidedAs("hello", Quiet)
	e.decidedAs("typo", Warn)
	e.toldOnce(ReasonUnrecognizedDataSourceKind, `kind "Helo"`)
	e.waitFor("/readyz to say the VolumePopulator API is available", func() bool {
		_, body := e.readyz()
		return strings.Contains(body, "VolumePopulator: available")
	})
}

// TestVolumePopulatorCreatedLater: a claim told its kind is unrecognized is
// decided again when a VolumePopulator registers the kind, and the next
// claim of that kind is told nothing; without the VolumePopulator, claims
// are told again.
func TestVolumePopulatorCreatedLater(t *testing.T) {
	e := startEnv(t)
	e.createClaim(newClaim("first", populatedBy("hello.example.com", "Hello")))
	e.decidedAs("first", Warn)
	e.toldOnce(ReasonUnrecognizedDataSourceKind, "Hello")

	e.createPopulator(hello)
	e.decidedAs("first", Quiet)
	e.createClaim(newClaim("next", populatedBy("hello.example.com", "Hello")))
	e.decidedAs("next", Quiet)
	e.toldNothing()

	e.deletePopulator("hello")
	e.decidedAs("first", Warn)
	e.decidedAs("next", Warn)
	if events := e.told(); len(events) != 2 {
		t.Errorf("events %q, want one for each claim", events)
	}
}

// TestReferenceGrantCRDInstalledLater: without the ReferenceGrant CRD a
// claim across namespaces is told so, in the sidecar's words; once the CRD
// is served and a grant allows the claim, it is quiet.
func TestReferenceGrantCRDInstalledLater(t *testing.T) {
	e := startEnv(t, withoutGrantCRD)
	e.createClaim(newClaim("c", restoring("prod", "foo-backup")))
	e.decidedAs("c", Warn)
	e.toldOnce(string(claimsource.ReasonGrantUnavailable), "is the CRD installed?")
	if _, body := e.readyz(); !strings.Contains(body, "ReferenceGrant: ReferenceGrant API") {
		t.Errorf("/readyz = %q, want it to say the ReferenceGrant API is not served", body)
	}

	e.createGrant(aliceGrant)
	e.serve(true, true, true)
	e.decidedAs("c", Quiet)
	e.toldNothing()
}

func TestReadinessBeforeSyncAndAsStandby(t *testing.T) {
	r := &readiness{controller: &Controller{}}
	rec := httpGet(r)
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before the claim cache synced = %d, want 503", rec.Code)
	}
	r.standby.Store(true)
	if rec := httpGet(r); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "standby") {
		t.Errorf("/readyz of a standby = %d %q, want 200 standby", rec.Code, rec.Body.String())
	}
}
