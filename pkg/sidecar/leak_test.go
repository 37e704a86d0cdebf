package sidecar

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var errInvalid = status.Error(codes.InvalidArgument, "the driver rejects this request")

// TestTimedOutCreateVolumeIsNotLeakedWhenTheClaimIsDeleted: CreateVolume
// times out (the volume may still be created by the driver), then the user
// deletes the claim. The sidecar must keep retrying the same request until
// it gets a final answer, create a PV for the volume it got, and that PV is
// then deleted through the normal reclaim path, so the driver keeps no
// volume behind.
func TestTimedOutCreateVolumeIsNotLeakedWhenTheClaimIsDeleted(t *testing.T) {
	e := startEnv(t, csiTimeout(300*time.Millisecond), retryBackoff(100*time.Millisecond))
	var calls atomic.Int32
	e.driver.SetCreateVolumeHook(func(ctx context.Context, _ *csispec.CreateVolumeRequest) (*csispec.CreateVolumeResponse, error, bool) {
		if calls.Add(1) == 1 {
			<-ctx.Done() // the first call outlives the sidecar's --timeout
			return nil, ctx.Err(), true
		}
		return nil, nil, false // later calls create the volume
	})
	claim := e.createClaim("apps", "data")
	e.waitFor("the first CreateVolume to time out", func() bool { return calls.Load() >= 1 })
	if err := e.kube.CoreV1().PersistentVolumeClaims("apps").Delete(e.ctx, claim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// The deleted claim stays in the controller's in-progress set, so the
	// retry (after the backoff) sends the same request and gets the volume.
	pv := e.waitForPVNamed(pvName(claim))
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != claim.UID {
		t.Fatalf("PV claimRef = %+v, want the deleted claim", pv.Spec.ClaimRef)
	}
	// The PV controller releases a PV whose claim is gone; the sidecar then
	// deletes the volume.
	pv.Status.Phase = v1.VolumeReleased
	if _, err := e.kube.CoreV1().PersistentVolumes().UpdateStatus(e.ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the driver to hold no volume", func() bool { return len(e.driver.Volumes()) == 0 })
}

func (e *env) waitForPVNamed(name string) *v1.PersistentVolume {
	e.t.Helper()
	var pv *v1.PersistentVolume
	e.waitFor("PV "+name, func() bool {
		var err error
		pv, err = e.kube.CoreV1().PersistentVolumes().Get(e.ctx, name, metav1.GetOptions{})
		return err == nil
	})
	return pv
}
