//go:build e2e

package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	linkclientset "github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned"
	"github.com/xns-csi/csi-provisioner/test/cluster"
)

// restartWithPendingRestore: a restore through a VolumeSnapshotLink is
// pending (the driver is slow), its snapshot's owner asks to delete the
// snapshot, and the sidecar is replaced by one that cannot read links yet:
// its ServiceAccount has lost the right to list them, as when a sidecar is
// upgraded before its RBAC. The new sidecar's claim and volume caches sync,
// its link cache cannot, so every claim restoring through a link looks
// absent; the snapshot must stay. Once the sidecar may list links again,
// the claim binds with the snapshot's data, and only then does the
// snapshot go.
//
// The refused list makes the link cache unreadable when the new sidecar's
// source protection first decides on the snapshot; that a cache that has
// not synced yet is "cannot tell" too is shown by the component test
// TestRestartWithTheLinkCacheNotSyncedKeepsLinkProtectedSnapshots.
func (l linkTest) restartWithPendingRestore(t *testing.T) {
	ctx := ctxFor(t)
	if err := world.InstallProjectCRDs(ctx); err != nil { // when the case runs alone
		t.Fatal(err)
	}
	// Killing the sidecar cancels the driver's restore; the replacement
	// restores again once it can read links, and --timeout outlasts the
	// delay.
	stack, err := world.StartStack(ctx, "link-restart.csi.example.com", []string{"--restore-delay=20s"})
	if err != nil {
		t.Fatal(err)
	}
	sidecarArgs := []string{"--timeout=90s", "--cross-namespace-snapshot"}
	first, err := world.StartSidecar(ctx, stack, "first", sidecarArgs...)
	if err != nil {
		t.Fatal(err)
	}
	class := storageClass(t, "link-restart", stack.Name)
	retainSnapshots(t, stack.Name)
	prod, test := namespace(t, "prod"), namespace(t, "test")
	sourceWithSnapshot(t, stack, prod, class, "snap", "pending data")
	linkGrant(t, prod, "links", test, "snap")
	l.createLink(t, test, "snap-link", prod, "snap")
	createPVC(t, test, "restore", class, throughLink("snap-link"))

	waitFor(t, "the links' finalizer on the snapshot", func(ctx context.Context) bool {
		s, err := world.Snaps.SnapshotV1().VolumeSnapshots(prod).Get(ctx, "snap", metav1.GetOptions{})
		return err == nil && slices.Contains(s.Finalizers, datasource.LinkSnapshotFinalizer)
	})
	if err := world.Snaps.SnapshotV1().VolumeSnapshots(prod).Delete(ctx, "snap", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	restoreRBAC := refuseLinkList(t)
	first.Kill()
	restarted, err := world.StartSidecar(ctx, stack, "restarted", sidecarArgs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed %s and started %s, which may not list VolumeSnapshotLinks", first.Name, restarted.Name)
	snapshotStays(t, ctx, prod, test, "the restarted sidecar's source protection to work off its queue", func() bool {
		return scrapeValue(t, restarted.HTTPAddr, `workqueue_adds_total{name="source-protection"}`) > 0 &&
			scrapeValue(t, restarted.HTTPAddr, `workqueue_depth{name="source-protection"}`) == 0
	})
	// The sidecar checks again whether it may list links 5 s after it was
	// refused (optionalAPIPollInterval): watched that long, the snapshot
	// has outlived any release the sidecar made on starting.
	deadline := time.Now().Add(5 * time.Second)
	snapshotStays(t, ctx, prod, test, "5 s", func() bool { return time.Now().After(deadline) })
	restoreRBAC()
	snapshotStays(t, ctx, prod, test, "the restore's volume", func() bool { return false })
	restoredThenSnapshotGone(t, stack, prod, test, "pending data")
}

// snapshotStays waits until done, or test/restore has a volume, and fails
// the test if the snapshot prod/snap is gone while the claim has none.
func snapshotStays(t *testing.T, ctx context.Context, prod, test, what string, done func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		// The snapshot is read before the volumes: gone, with no volume
		// afterwards, it went while the claim needed it.
		_, err := world.Snaps.SnapshotV1().VolumeSnapshots(prod).Get(ctx, "snap", metav1.GetOptions{})
		gone := apierrors.IsNotFound(err)
		has, err := hasVolume(ctx, test, "restore")
		switch {
		case err != nil:
			return false, nil
		case has:
			return true, nil
		case gone:
			t.Fatalf("the snapshot was deleted while %s/restore still waited for its volume\n%s", test, describeEvents(test, "restore"))
		}
		return done(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s while the snapshot stays: %v", what, err)
	}
}

// refuseLinkList takes the rule for VolumeSnapshotLinks out of the
// sidecars' ClusterRole and waits until the API server refuses the
// sidecars' list of links. It returns the function that puts the rule
// back, which also runs at cleanup.
func refuseLinkList(t *testing.T) (restore func()) {
	t.Helper()
	restore = takeRule(t, snapshotGroup, "volumesnapshotlinks")
	config, err := world.Cluster.RESTConfig(cluster.Sidecar)
	if err != nil {
		t.Fatal(err)
	}
	asSidecar, err := linkclientset.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the API server to refuse the sidecars' list of links", func(ctx context.Context) bool {
		_, err := asSidecar.SnapshotV1alpha1().VolumeSnapshotLinks("").List(ctx, metav1.ListOptions{Limit: 1})
		return apierrors.IsForbidden(err)
	})
	return restore
}
