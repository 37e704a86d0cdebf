// Package leadertest stands in for leader election in the tests of the
// binaries' metrics endpoints.
package leadertest

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Elect builds a leader elector of the Lease lockName as csi-lib-utils
// does for leader.Run (it names no election), which sets client-go's
// leader_election_master_status{name=""} to 0 until it leads; nothing runs
// it.
func Elect(t testing.TB, lockName string) {
	t.Helper()
	lock := &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: "default", Name: lockName},
		Client: kubefake.NewClientset().CoordinationV1(), LockConfig: resourcelock.ResourceLockConfig{Identity: "replica-a"}}
	_, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{Lock: lock, LeaseDuration: 15 * time.Second,
		RenewDeadline: 10 * time.Second, RetryPeriod: 5 * time.Second,
		Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}}})
	if err != nil {
		t.Fatal(err)
	}
}
