package sidecar

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

var errInvalid = status.Error(codes.InvalidArgument, "the driver rejects this request")

// The tests of this file play a CreateVolume whose outcome the sidecar does
// not learn: the driver creates the volume, but its answer comes after the
// sidecar's --timeout. Something then changes while the claim is parked in
// the background: the claim, the grant or the snapshot goes. Once
// CreateVolume may have run, the sidecar must finish or undo it: it sends
// the same request again without re-checking the source, deletes the volume
// if the claim is gone, and keeps the source protected meanwhile.

// lostAnswer is a CreateVolume hook: the first call creates the volume and
// answers DeadlineExceeded; later calls wait until the test calls answer
// (answering DeadlineExceeded when the sidecar's --timeout comes first),
// then go through normally and find the volume by name.
type lostAnswer struct {
	e       *env
	proceed chan struct{}
	once    sync.Once
}

func loseFirstAnswer(e *env) *lostAnswer {
	l := &lostAnswer{e: e, proceed: make(chan struct{})}
	first := true
	var mu sync.Mutex
	e.driver.SetCreateVolumeHook(func(ctx context.Context, req *csispec.CreateVolumeRequest) (*csispec.CreateVolumeResponse, error, bool) {
		mu.Lock()
		wasFirst := first
		first = false
		mu.Unlock()
		if wasFirst {
			if _, err := e.driver.Create(req); err != nil {
				return nil, err, true
			}
			return nil, status.Error(codes.DeadlineExceeded, "the answer was lost"), true
		}
		select {
		case <-l.proceed:
			return nil, nil, false
		case <-ctx.Done():
			return nil, ctx.Err(), true
		}
	})
	return l
}

// answer lets the driver's answers through from now on.
func (l *lostAnswer) answer() { l.once.Do(func() { close(l.proceed) }) }

// retried waits until the sidecar has sent CreateVolume for the claim n
// more times, so the change the test made has reached its caches.
func (l *lostAnswer) retried(claim *v1.PersistentVolumeClaim, n int) {
	l.e.t.Helper()
	want := len(l.e.createRequests(claim)) + n
	l.e.waitFor("CreateVolume to be sent again", func() bool { return len(l.e.createRequests(claim)) >= want })
}

// parkedRestore starts a sidecar whose --timeout is short, and a claim
// test/data restoring prod/snap (granted) whose first answer is lost.
func parkedRestore(t *testing.T) (*env, *v1.PersistentVolumeClaim, *lostAnswer) {
	t.Helper()
	e := startEnv(t, knownSnapshots("prod/snap"), csiTimeout(300*time.Millisecond), retryBackoff(100*time.Millisecond),
		beforeStart(recordReleases))
	e.createSnapshot("prod", "snap", true)
	e.createGrant("prod", "bar", "test", "snap")
	lost := loseFirstAnswer(e)
	claim := e.createClaim("test", "data", fromSnapshot("prod", "snap"))
	e.waitFor("the first CreateVolume", func() bool { return len(e.createRequests(claim)) >= 1 })
	return e, claim, lost
}

// TestTimedOutRestoreOfADeletedClaimIsUndone: the scenario. The
// claim is deleted, then its snapshot; every retry used to refuse ("does
// not exist") and the volume leaked. The volume is deleted instead, and no
// PV is made for the deleted claim.
func TestTimedOutRestoreOfADeletedClaimIsUndone(t *testing.T) {
	e, claim, lost := parkedRestore(t)
	if err := e.kube.CoreV1().PersistentVolumeClaims("test").Delete(e.ctx, claim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.snaps.SnapshotV1().VolumeSnapshots("prod").Delete(e.ctx, "snap", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	lost.retried(claim, 2)
	lost.answer()

	e.waitFor("the driver to hold no volume", func() bool { return len(e.driver.Volumes()) == 0 })
	if n := len(e.driver.DeleteVolumeRequests()); n != 1 {
		t.Errorf("%d DeleteVolume calls, want 1", n)
	}
	e.noPV(claim)
}

// TestSourceStaysProtectedWhileACreateVolumeOfADeletedClaimMayRun: the
// claim's deletion does not release the snapshot while its CreateVolume
// outcome is unknown: the driver may be reading it.
func TestSourceStaysProtectedWhileACreateVolumeOfADeletedClaimMayRun(t *testing.T) {
	e, claim, lost := parkedRestore(t)
	if err := e.kube.CoreV1().PersistentVolumeClaims("test").Delete(e.ctx, claim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	lost.retried(claim, 2)
	if r := e.releases.Load(); r != 0 {
		t.Fatalf("the snapshot was released %d times while CreateVolume may still run", r)
	}
	lost.answer()
	e.waitFor("the snapshot to be released once the volume is deleted", func() bool {
		return !hasString(e.snapshotFinalizers("prod", "snap"), datasource.CrossNamespaceSnapshotFinalizer)
	})
	if n := len(e.driver.DeleteVolumeRequests()); n != 1 {
		t.Errorf("%d DeleteVolume calls before the release, want 1", n)
	}
}

// TestTimedOutRestoreFinishesAfterTheGrantIsRevoked: the attempt passed its
// grant check before CreateVolume; revoking the grant then refuses new
// attempts (KEP-3294), but this one finishes rather than leak its volume.
func TestTimedOutRestoreFinishesAfterTheGrantIsRevoked(t *testing.T) {
	e, claim, lost := parkedRestore(t)
	e.deleteGrant("prod", "bar")
	lost.retried(claim, 2)
	lost.answer()
	e.waitForPV(claim)
	assertRestoredFrom(t, e, claim, snapshotHandle("prod", "snap"))
}

// TestTimedOutRestoreFinishesWhenTheSnapshotIsBeingDeleted: the owner asks
// to delete the snapshot while the restore is parked; the finalizer holds
// it, the restore finishes, and then the snapshot is released.
func TestTimedOutRestoreFinishesWhenTheSnapshotIsBeingDeleted(t *testing.T) {
	e, claim, lost := parkedRestore(t)
	snap, err := e.snaps.SnapshotV1().VolumeSnapshots("prod").Get(e.ctx, "snap", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	snap.DeletionTimestamp = &metav1.Time{Time: time.Now()} // as the API server does, the finalizer holding it
	if _, err := e.snaps.SnapshotV1().VolumeSnapshots("prod").Update(e.ctx, snap, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	lost.retried(claim, 2)
	lost.answer()
	e.waitForPV(claim)
	e.waitFor("the snapshot to be released", func() bool {
		return !hasString(e.snapshotFinalizers("prod", "snap"), datasource.CrossNamespaceSnapshotFinalizer)
	})
}

// recordReleases makes the snapshot client count the patches that remove
// a finalizer, in e.releases.
func recordReleases(e *env) {
	e.snaps.PrependReactor("patch", "volumesnapshots", func(action clienttesting.Action) (bool, runtime.Object, error) {
		// The barriers' own snapshots (protectionSeen) do not count.
		if p, ok := action.(clienttesting.PatchAction); ok && strings.Contains(string(p.GetPatch()), `"op":"remove"`) && action.GetNamespace() != "barriers" {
			e.releases.Add(1)
		}
		return false, nil, nil
	})
}
