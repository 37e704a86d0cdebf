//go:build race

package sidecar

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// TestReprovisionWhileThePVIsRetriedDoesNotRace (adversarial review
// of 373dbdd; run with -race, as make test does): the API server refuses
// the first saves of a claim's PV (429, as an overloaded API server
// answers), so the controller library keeps the PV in its unsaved-PV queue
// and retries it in the queue's worker. Meanwhile the claim's owner patches
// a label on the claim, again and again: each update hands the claim to
// Provision, which returns the PV it holds as being saved, the very object
// in the library's queue, and the library's worker writes its claimRef and
// annotations map while the queue's worker reads the object for its next
// Create. The race detector reports it; without -race the runtime may end
// the process with "concurrent map read and map write".
func TestReprovisionWhileThePVIsRetriedDoesNotRace(t *testing.T) {
	var refusing atomic.Bool
	refusing.Store(true)
	var refused atomic.Int32
	e := startEnv(t, beforeStart(func(e *env) {
		e.kube.PrependReactor("create", "persistentvolumes", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if !refusing.Load() {
				return false, nil, nil
			}
			refused.Add(1)
			return true, nil, apierrors.NewTooManyRequests("the API server is overloaded", 1)
		})
	}))
	claim := e.createClaim("test", "data")
	e.waitFor("a refused save of the claim's PV", func() bool { return refused.Load() > 0 })

	// The owner touches the claim for two seconds, while the library's
	// queue retries the PV (5 ms doubling).
	deadline := time.Now().Add(2 * time.Second)
	touch := func(i int) {
		c, err := e.kube.CoreV1().PersistentVolumeClaims("test").Get(e.ctx, "data", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c = c.DeepCopy()
		metav1.SetMetaDataLabel(&c.ObjectMeta, "touched", fmt.Sprint(i))
		if _, err := e.kube.CoreV1().PersistentVolumeClaims("test").Update(e.ctx, c, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	for ; time.Now().Before(deadline); i++ {
		touch(i)
		time.Sleep(2 * time.Millisecond)
	}
	// The API server recovers; the library's queue has backed off far by
	// now, so one more event on the claim saves the PV (StoreVolume).
	refusing.Store(false)
	touch(i)
	pv := e.waitForPV(claim)
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != claim.UID {
		t.Errorf("PV claimRef = %v", pv.Spec.ClaimRef)
	}
	if n := len(e.createRequests(claim)); n != 1 {
		t.Errorf("CreateVolume calls = %d, want 1", n)
	}
}
