//go:build faults

package faults

import (
	"context"
	"testing"
	"time"

	"github.com/xns-csi/csi-provisioner/test/localdriver"
)

// slowCreates holds every CreateVolume 1 s before it runs, so that a burst
// has calls in flight when the fault strikes.
var slowCreates = localdriver.FaultRule{Method: "CreateVolume", Delay: "1s"}

// waitCreatesStarted waits until the driver has received n CreateVolume
// calls.
func waitCreatesStarted(t *testing.T, sc *scenario, n int) {
	t.Helper()
	waitFor(t, "CreateVolume calls to start", time.Minute, func(context.Context) bool {
		return sc.st.countCalls(t, "CreateVolume").started >= n
	})
}

// waitInFlight waits until the driver has at least n CreateVolume calls
// started and not answered, and returns how many.
func waitInFlight(t *testing.T, sc *scenario, n int) int {
	t.Helper()
	var inFlight int
	waitFor(t, "CreateVolume calls in flight", time.Minute, func(context.Context) bool {
		inFlight = len(sc.st.countCalls(t, "CreateVolume").inFlight)
		return inFlight >= n
	})
	return inFlight
}

// TestSidecarKilledMidBurst: the sidecar is SIGKILLed with CreateVolume
// calls in flight and comes back a second later; it finds the claims and
// the finalizers where its predecessor left them.
func TestSidecarKilledMidBurst(t *testing.T) {
	sc := newScenario(t, "sidecarkill", scenarioOptions{})
	sc.st.setFaults(t, slowCreates)
	sc.burst(t, 10)
	inFlight := waitInFlight(t, sc, 3)
	sc.st.sidecar.Kill()
	t.Logf("killed the sidecar with %d CreateVolume calls in flight", inFlight)
	sc.burst(t, 10)
	sc.reconcile(t)
}

// TestControlPlaneRestarted: kube-apiserver is SIGKILLed and restarted on
// the same port and etcd mid-burst, then etcd once; every watch of the
// sidecar, the snapshot controllers and kube-controller-manager breaks.
// The caches must recover and no claim may wait past its event.
func TestControlPlaneRestarted(t *testing.T) {
	sc := newScenario(t, "apiserver", scenarioOptions{})
	sc.st.setFaults(t, slowCreates)
	ctx := context.Background()
	sc.burst(t, 8)
	waitCreatesStarted(t, sc, 2)
	if err := world.Cluster.Restart(ctx, "kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	t.Logf("kube-apiserver restarted with %d claims bound", sc.bound(ctx))
	sc.burst(t, 8)
	if err := world.Cluster.Restart(ctx, "etcd"); err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd restarted with %d claims bound", sc.bound(ctx))
	sc.burst(t, 4)
	sc.reconcile(t)
}
