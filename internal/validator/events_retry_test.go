package validator

// Scenarios from the adversarial review of issue 22's validator changes (66f0043, 18b5f9f,
// ce87221, 7820d26): events written by the worker itself.

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
)

var eventsResource = schema.GroupResource{Resource: "events"}

// TestAnEventStoredButNotAcknowledgedIsNotWrittenTwice: the API
// server stores the event but the answer is lost (a timeout, a connection
// reset, a 504 from a proxy). The write returns an error, the claim is
// not counted as told and is decided again: a second event with the same
// reason and message, because each write has a new time-based name, so
// the retry cannot be recognized (AlreadyExists) as the same event. The
// docs/validator.md promises "each claim is told once per state".
func TestAnEventStoredButNotAcknowledgedIsNotWrittenTwice(t *testing.T) {
	e := startEnv(t)
	var writes atomic.Int32
	e.events.PrependReactor("create", "events", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if writes.Add(1) > 1 {
			return false, nil, nil
		}
		create := action.(clienttesting.CreateAction)
		if err := e.events.Tracker().Create(action.GetResource(), create.GetObject(), action.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, nil, apierrors.NewTimeoutError("the server was unable to return a response in the time allotted", 1)
	})
	e.createClaim(newClaim("c", restoring("prod", "foo-backup")))
	e.decidedAs("c", Warn)
	if got := e.eventsPerClaim()["c"][string(claimsource.ReasonGrantMissing)]; got != 1 {
		t.Errorf("the claim has %d %s events for one state, want 1 (%d writes)", got, claimsource.ReasonGrantMissing, writes.Load())
	}
}

// TestEventsRefusedThenAllowed: the events API refuses every write
// (the validator's RBAC lost create on events, or the namespace's event
// quota is full) for a while. No claim is remembered as told meanwhile,
// each is told exactly once when writes are allowed again, and a claim
// deleted during the refusal is not remembered (holds today).
func TestEventsRefusedThenAllowed(t *testing.T) {
	e := startEnv(t)
	var refusing atomic.Bool
	refusing.Store(true)
	var refused atomic.Int32
	e.events.PrependReactor("create", "events", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if refusing.Load() {
			refused.Add(1)
			return true, nil, apierrors.NewForbidden(eventsResource, "", fmt.Errorf("exceeded quota: events, requested: count/events=1, used: count/events=100, limited: count/events=100"))
		}
		return false, nil, nil
	})
	names := []string{"a", "b", "c", "gone"}
	for _, n := range names {
		e.createClaim(newClaim(n, restoring("prod", "foo-backup")))
	}
	e.waitFor("refused writes", func() bool { return refused.Load() >= 8 })
	if n := e.c.notices.remembered(); n != 0 {
		t.Fatalf("%d claims remembered as told while every write was refused", n)
	}
	if err := e.kube.CoreV1().PersistentVolumeClaims("test").Delete(e.ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	refusing.Store(false)
	for _, n := range names[:3] {
		e.decidedAs(n, Warn)
	}
	e.waitFor("every live claim told", func() bool { return e.c.notices.remembered() == 3 })
	time.Sleep(300 * time.Millisecond) // any stray retry
	told := e.eventsPerClaim()
	for _, n := range names[:3] {
		if got := told[n][string(claimsource.ReasonGrantMissing)]; got != 1 {
			t.Errorf("claim %s told %d times, want once", n, got)
		}
	}
	if told["gone"] != nil {
		t.Errorf("the claim deleted during the refusal was told: %v", told["gone"])
	}
}

// TestARefusedNamespaceDelaysOthersOnlyByWhatIsAheadOfThem: the
// workers write the events themselves, through the events client's rate
// limiter (modeled here: each write, refused or not, takes 10 ms, one
// worker). 100 claims of a namespace whose events are refused keep
// coming back after their backoff; a claim of another namespace created
// meanwhile waits only for what is queued ahead of it (bounded, not
// starved: holds today). In a cluster the bound is (claims refused)/QPS:
// at the default --kube-api-qps 5, 5,000 refused claims re-tried at the
// queue's 1,000 s cap saturate the budget and keep every other warning up
// to ~17 minutes late for as long as the refusal lasts.
func TestARefusedNamespaceDelaysOthersOnlyByWhatIsAheadOfThem(t *testing.T) {
	const n, write = 100, 10 * time.Millisecond
	e := startEnv(t, undecided)
	var refusedWrites atomic.Int32
	e.events.PrependReactor("create", "events", func(action clienttesting.Action) (bool, runtime.Object, error) {
		time.Sleep(write)
		if action.GetNamespace() == "full" {
			refusedWrites.Add(1)
			return true, nil, apierrors.NewForbidden(eventsResource, "", fmt.Errorf("exceeded quota: events"))
		}
		return false, nil, nil
	})
	for i := range n {
		c := newClaim(fmt.Sprintf("f-%03d", i), restoring("prod", "foo-backup"))
		c.Namespace = "full"
		if _, err := e.kube.CoreV1().PersistentVolumeClaims("full").Create(e.ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.waitFor("the refused namespace's first round", func() bool { return refusedWrites.Load() >= n })
	start := time.Now()
	e.createClaim(newClaim("other", restoring("prod", "foo-backup")))
	e.waitFor("the other namespace's claim to be told", func() bool { return e.eventsPerClaim()["other"] != nil })
	took := time.Since(start)
	t.Logf("the other namespace's claim was told after %v (%d refused writes so far)", took, refusedWrites.Load())
	if bound := time.Duration(n+10) * write * 2; took > bound {
		t.Errorf("told after %v, more than the %v of what can be queued ahead of it", took, bound)
	}
	if !strings.Contains(e.logs(), "Cannot tell the claim") {
		t.Errorf("the refusals are not logged")
	}
}
