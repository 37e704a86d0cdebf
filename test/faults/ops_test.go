//go:build faults

package faults

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// TestLeaderKilled: two sidecar replicas under leader election; the leader
// is SIGKILLed with CreateVolume calls in flight (and restarted a second
// later, as its pod would be); the standby takes the Lease over and
// finishes the burst. No claim gets two volumes.
func TestLeaderKilled(t *testing.T) {
	sc := newScenario(t, "leader", scenarioOptions{sidecar: []string{"--leader-election", "--leader-election-namespace=default",
		"--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s", "--leader-election-retry-period=1s"}})
	standby := sc.st.startSidecar(t, "leader-provisioner-b")
	sc.st.setFaults(t, slowCreates)
	sc.burst(t, 10)
	inFlight := waitInFlight(t, sc, 3)
	leader := sc.leader(t, sc.st.sidecar, standby)
	leader.Kill()
	t.Logf("killed the leader %s with %d CreateVolume calls in flight", leader.name, inFlight)
	sc.burst(t, 10)
	sc.reconcile(t)
}

// leader returns the replica whose identity holds a Lease; each replica
// logs its identity when it starts.
func (sc *scenario) leader(t *testing.T, replicas ...*supervised) *supervised {
	t.Helper()
	var found *supervised
	var holders []string
	defer func() {
		if found == nil {
			t.Logf("Lease holders seen: %v", holders)
		}
	}()
	waitFor(t, "a leader", time.Minute, func(ctx context.Context) bool {
		leases, err := world.Kube.CoordinationV1().Leases("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			holders = []string{err.Error()}
			return false
		}
		holders = nil
		for _, l := range leases.Items {
			if l.Spec.HolderIdentity != nil {
				holders = append(holders, l.Name+"="+*l.Spec.HolderIdentity)
			}
			if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
				continue
			}
			for _, r := range replicas {
				// The Lease holds the identity as csi-lib-utils sanitized it.
				log, err := os.ReadFile(r.LogPath())
				if err == nil && strings.Contains(strings.ReplaceAll(string(log), "_", "-"), `identity="`+strings.ReplaceAll(*l.Spec.HolderIdentity, "_", "-")+`"`) {
					found = r
					return true
				}
			}
		}
		return false
	})
	return found
}
