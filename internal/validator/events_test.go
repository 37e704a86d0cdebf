package validator

import (
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
)

// TestTheEventIsAboutTheClaimFromTheValidator: the stored event names the
// claim and the validator, as client-go's recorder would.
func TestTheEventIsAboutTheClaimFromTheValidator(t *testing.T) {
	e := startEnv(t)
	e.createClaim(newClaim("c", restoring("prod", "foo-backup")))
	e.decidedAs("c", Warn)
	list, err := e.events.CoreV1().Events("test").List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("%d events, want 1", len(list.Items))
	}
	ev := list.Items[0]
	obj := ev.InvolvedObject
	if obj.Kind != "PersistentVolumeClaim" || obj.APIVersion != "v1" || obj.Namespace != "test" || obj.Name != "c" || obj.UID != "uid-c" ||
		ev.Type != v1.EventTypeWarning || ev.Count != 1 || ev.Source.Component != Component || ev.ReportingController != Component {
		t.Errorf("event %+v, want a Warning about v1 PersistentVolumeClaim test/c (uid-c) from %s", ev, Component)
	}
}

// TestAnEventNotStoredIsWrittenAgain: a claim whose event the API server
// did not store is not counted as told: it is decided again after the
// queue's backoff, and told once.
func TestAnEventNotStoredIsWrittenAgain(t *testing.T) {
	e := startEnv(t)
	var refused atomic.Int32
	e.events.PrependReactor("create", "events", func(clienttesting.Action) (bool, runtime.Object, error) {
		if refused.Add(1) == 1 {
			return true, nil, apierrors.NewServiceUnavailable("etcd is busy")
		}
		return false, nil, nil
	})
	e.createClaim(newClaim("c", restoring("prod", "foo-backup")))
	e.decidedAs("c", Warn)
	e.toldOnce(string(claimsource.ReasonGrantMissing), grantMissing)
	if n := refused.Load(); n != 2 {
		t.Errorf("%d writes of the event, want the refused one and one more", n)
	}
	if got := e.eventsTotal(string(claimsource.ReasonGrantMissing)); got != 1 {
		t.Errorf("events_total{reason=ReferenceGrantMissing} = %v, want 1", got)
	}
}
