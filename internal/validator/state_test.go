package validator

import (
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge/metricstest"
)

// manualClock is a clock the test moves; workers read it.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (c *manualClock) step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// warned is what the validator's registry shows of the warned claims.
func (e *env) warned() []string {
	e.t.Helper()
	return metricstest.Gather(e.t, e.registry, "volume_data_source_validator_warned_claims",
		"volume_data_source_validator_warned_claims_oldest_seconds")
}

// TestWarnedClaimsAreCountedByReasonUntilTheirStateChanges: a claim told a
// Warning is counted under its reason, aged from when it was first told,
// a new warning keeping that age; it leaves once it is fine, or deleted.
func TestWarnedClaimsAreCountedByReasonUntilTheirStateChanges(t *testing.T) {
	clock := &manualClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	e := startEnv(t, withClock(clock))
	metricstest.Expect(t, e.warned())

	e.createClaim(newClaim("restore", restoring("prod", "foo-backup")))
	e.decidedAs("restore", Warn)
	clock.step(10 * time.Minute)
	e.createClaim(newClaim("typo", populatedBy("hello.example.com", "Helo")))
	e.decidedAs("typo", Warn)
	clock.step(5 * time.Minute)
	metricstest.Expect(t, e.warned(),
		`volume_data_source_validator_warned_claims{reason="ReferenceGrantMissing"} 1`,
		`volume_data_source_validator_warned_claims_oldest_seconds{reason="ReferenceGrantMissing"} 900`,
		`volume_data_source_validator_warned_claims{reason="UnrecognizedDataSourceKind"} 1`,
		`volume_data_source_validator_warned_claims_oldest_seconds{reason="UnrecognizedDataSourceKind"} 300`)
	e.told()

	e.updateClaim("restore", cloning("prod", "data")) // told again, of another grant: still warned since first told
	e.decidedAs("restore", Warn)
	e.toldOnce(string(claimsource.ReasonGrantMissing), "")
	e.createGrant(cloneGrant)
	e.decidedAs("restore", Quiet)
	if err := e.kube.CoreV1().PersistentVolumeClaims("test").Delete(e.ctx, "typo", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the deleted claim to leave the gauges", func() bool { return len(e.warned()) == 0 })
}

// TestAWarningTakesItsNewReasonAndKeepsItsAge: a claim told something
// else moves to the new reason, aged from its first warning.
func TestAWarningTakesItsNewReasonAndKeepsItsAge(t *testing.T) {
	clock := &manualClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	e := startEnv(t, withClock(clock))
	e.createClaim(newClaim("c", populatedBy("hello.example.com", "Helo")))
	e.decidedAs("c", Warn)
	clock.step(time.Hour)
	e.updateClaim("c", restoring("prod", "foo-backup"))
	e.decidedAs("c", Warn)
	metricstest.Expect(t, e.warned(),
		`volume_data_source_validator_warned_claims{reason="ReferenceGrantMissing"} 1`,
		`volume_data_source_validator_warned_claims_oldest_seconds{reason="ReferenceGrantMissing"} 3600`)
}

// TestOptionalAPIsAreAvailableOrSayWhyNot: the validator's optional APIs
// are in its gauges, a CRD not installed as not_served.
func TestOptionalAPIsAreAvailableOrSayWhyNot(t *testing.T) {
	e := startEnv(t, withoutPopulatorCRD)
	e.waitFor("the ReferenceGrant and VolumeSnapshotLink caches to sync", func() bool {
		return e.c.grants.Err() == nil && e.c.links.Err() == nil
	})
	metricstest.Expect(t, metricstest.Gather(t, e.registry, "volume_data_source_validator_optional_api_available"),
		`volume_data_source_validator_optional_api_available{api="ReferenceGrant"} 1`,
		`volume_data_source_validator_optional_api_available{api="VolumePopulator"} 0`,
		`volume_data_source_validator_optional_api_available{api="VolumeSnapshotLink"} 1`)
	state := metricstest.Gather(t, e.registry, "volume_data_source_validator_optional_api_state")
	if want := `volume_data_source_validator_optional_api_state{api="VolumePopulator",state="not_served"} 1`; !slices.Contains(state, want) {
		t.Errorf("states %q, want %s", state, want)
	}
}

func TestValidatorStateGaugesAreLintClean(t *testing.T) {
	e := startEnv(t)
	e.createClaim(newClaim("typo", populatedBy("hello.example.com", "Helo")))
	e.decidedAs("typo", Warn)
	metricstest.Lint(t, stateCollector{e.c})
}
