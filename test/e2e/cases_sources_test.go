//go:build e2e

package e2e

import (
	"context"
	"github.com/xns-csi/csi-provisioner/test/localenv"
	"path/filepath"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// protectionFinalizer protects a snapshot restored by a claim naming its
// namespace, as the restores across namespaces of these cases do.
const protectionFinalizer = datasource.CrossNamespaceSnapshotFinalizer

// testSnapshotDeletedWhileProvisioning: the source snapshot is deleted while
// a slow driver restores it across namespaces. The deletion waits for the
// provisioner's finalizer, the claim binds with the data, the finalizer goes
// and the snapshot with it, and the driver holds no volume nobody owns.
func testSnapshotDeletedWhileProvisioning(t *testing.T) {
	ctx := ctxFor(t)
	slow, err := world.StartStack(ctx, "slow.csi.example.com", []string{"--restore-delay=8s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := world.StartSidecar(ctx, slow, "slow", "--timeout=30s"); err != nil {
		t.Fatal(err)
	}
	class := storageClass(t, "slow", slow.Name)
	prod, test := namespace(t, "prod"), namespace(t, "test")
	sourceWithSnapshot(t, slow, prod, class, "snap", "slow data")
	grant(t, prod, "allow", test, "snap")
	createPVC(t, test, "restore", class, restoring(prod, "snap"))

	deleteProtectedSnapshot(t, ctx, prod)
	s, err := world.Snaps.SnapshotV1().VolumeSnapshots(prod).Get(ctx, "snap", metav1.GetOptions{})
	if err != nil || s.DeletionTimestamp == nil {
		t.Fatalf("the snapshot should wait for provisioning in deletion, got %v (err %v)", s, err)
	}

	restoredThenSnapshotGone(t, slow, prod, test, "slow data")
}

// testSameNamespaceSources: restore and clone within a namespace work as in
// the upstream provisioner, and a populator's kind is left alone.
func testSameNamespaceSources(t *testing.T) {
	class := storageClass(t, "same", localenv.LocalDriver)
	ns := namespace(t, "apps")
	sourceWithSnapshot(t, world.Local, ns, class, "snap", "snapshot data")

	createPVC(t, ns, "restored", class, restoring("", "snap"))
	if got := readData(t, world.Local, waitBound(t, ns, "restored")); got != "snapshot data" {
		t.Errorf("restored data = %q", got)
	}

	origin := waitBound(t, ns, "snap-source")
	writeData(t, world.Local, origin, "live data")
	createPVC(t, ns, "clone", class, cloning("snap-source"))
	if got := readData(t, world.Local, waitBound(t, ns, "clone")); got != "live data" {
		t.Errorf("cloned data = %q", got)
	}

	createPVC(t, ns, "populated", class, populatedBy("hello.example.com", "Hello", "h1"))
	// The event is sent by the very decision to leave the claim alone.
	waitEvent(t, ns, "populated", "WaitingForPopulator", "Hello.hello.example.com")
	staysPending(t, ns, "populated")
}

func waitFor(t *testing.T, what string, cond func(context.Context) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctxFor(t), 100*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		return cond(ctx), nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// restoredThenSnapshotGone waits until the claim namespace/restore is bound
// with data restored by stack, then until the snapshot prod/snap whose
// deletion waited for it is gone, and checks that the driver holds exactly
// the source volume and the restored one: nothing leaked.
func restoredThenSnapshotGone(t *testing.T, stack *localenv.Stack, prod, namespace, data string) {
	t.Helper()
	pv := waitBound(t, namespace, "restore")
	if got := readData(t, stack, pv); got != data {
		t.Errorf("restored data = %q, want %q", got, data)
	}
	waitFor(t, "the snapshot to be deleted once provisioning is done", func(ctx context.Context) bool {
		_, err := world.Snaps.SnapshotV1().VolumeSnapshots(prod).Get(ctx, "snap", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	volumes, err := filepath.Glob(filepath.Join(stack.State, "volumes", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(volumes) != 2 {
		t.Errorf("the driver holds %d volumes, want 2 (the source and the restore): %v", len(volumes), volumes)
	}
}

// deleteProtectedSnapshot waits until the snapshot prod/snap carries the
// provisioner's finalizer (a restore from it is in flight), then asks to
// delete it.
func deleteProtectedSnapshot(t *testing.T, ctx context.Context, prod string) {
	t.Helper()
	waitFor(t, "the provisioner's finalizer on the snapshot", func(ctx context.Context) bool {
		s, err := world.Snaps.SnapshotV1().VolumeSnapshots(prod).Get(ctx, "snap", metav1.GetOptions{})
		return err == nil && slices.Contains(s.Finalizers, protectionFinalizer)
	})
	if err := world.Snaps.SnapshotV1().VolumeSnapshots(prod).Delete(ctx, "snap", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}
