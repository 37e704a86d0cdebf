package validator

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
)

// TestOneEventPerClaimAndState: a claim is told once; updates and resyncs
// that do not change what it would be told are quiet; a new state is told.
func TestOneEventPerClaimAndState(t *testing.T) {
	e := startEnv(t)
	e.createClaim(newClaim("c", populatedBy("hello.example.com", "Hello")))
	e.decidedAs("c", Warn)
	e.toldOnce(ReasonUnrecognizedDataSourceKind, `kind "Hello"`)

	for _, label := range []string{"a", "b", "c"} { // what a resync does: decide again
		e.updateClaim("c", func(c *v1.PersistentVolumeClaim) { c.Labels = map[string]string{"try": label} })
		e.decidedAs("c", Warn)
	}
	e.toldNothing()
	if got := e.eventsTotal(ReasonUnrecognizedDataSourceKind); got != 1 {
		t.Errorf("events_total{reason=UnrecognizedDataSourceKind} = %v, want 1", got)
	}
}

// TestToldAgainAfterBeingFine: a claim told about a missing grant is quiet
// once the grant allows it, and told again when the grant is revoked.
func TestToldAgainAfterBeingFine(t *testing.T) {
	e := startEnv(t)
	e.createClaim(newClaim("c", restoring("prod", "foo-backup")))
	e.decidedAs("c", Warn)
	e.toldOnce(string(claimsource.ReasonGrantMissing), grantMissing)

	e.createGrant(aliceGrant)
	e.decidedAs("c", Quiet)
	e.toldNothing()

	e.deleteGrant("prod", "bar")
	e.decidedAs("c", Warn)
	e.toldOnce(string(claimsource.ReasonGrantMissing), grantMissing)
}

// TestBoundClaimsAreNeverTold: neither a claim created bound nor one that
// binds after being told gets an event, and a bound claim is forgotten.
func TestBoundClaimsAreNeverTold(t *testing.T) {
	e := startEnv(t)
	e.createClaim(newClaim("bound", populatedBy("hello.example.com", "Hello"), bound))
	e.decidedAs("bound", Quiet)
	e.toldNothing()

	e.createClaim(newClaim("c", populatedBy("hello.example.com", "Hello")))
	e.decidedAs("c", Warn)
	e.toldOnce(ReasonUnrecognizedDataSourceKind, "Hello")
	e.updateClaim("c", bound)
	e.decidedAs("c", Quiet)
	e.toldNothing()
	if n := e.c.notices.remembered(); n != 0 {
		t.Errorf("%d claims remembered, want none once bound", n)
	}
}

// TestDeletedClaimsAreForgotten: what a claim was told goes with it.
func TestDeletedClaimsAreForgotten(t *testing.T) {
	e := startEnv(t)
	e.createClaim(newClaim("c", restoring("prod", "foo-backup")))
	e.decidedAs("c", Warn)
	if err := e.kube.CoreV1().PersistentVolumeClaims("test").Delete(e.ctx, "c", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the deleted claim to be forgotten", func() bool { return e.c.notices.remembered() == 0 })
}

// TestAClaimDeletedWhileToldIsForgotten: a claim deleted while its event
// is being written is not remembered as told once the write returns.
func TestAClaimDeletedWhileToldIsForgotten(t *testing.T) {
	e := startEnv(t)
	e.events.PrependReactor("create", "events", func(clienttesting.Action) (bool, runtime.Object, error) {
		if err := e.kube.CoreV1().PersistentVolumeClaims("test").Delete(e.ctx, "c", metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
		e.waitFor("the claim to leave the cache", func() bool {
			_, exists, _ := e.c.claims.GetIndexer().GetByKey("test/c")
			return !exists
		})
		time.Sleep(10 * time.Millisecond) // the informer's handler forgets it meanwhile
		return false, nil, nil
	})
	e.createClaim(newClaim("c", restoring("prod", "foo-backup")))
	e.decidedAs("c", Warn)
	if n := e.c.notices.remembered(); n != 0 {
		t.Errorf("%d claims remembered, want none: the claim is gone", n)
	}
}
