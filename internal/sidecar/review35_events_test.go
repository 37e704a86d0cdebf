package sidecar

// Review 35 of 086113a (fanout): the handlers of an informer that never
// wait share one registration and run one after the other, in the order
// wireEvents lists them. On the claim informer the deletion-order Log's
// handler comes first; on the snapshot informer it comes last, after the
// requeue of every claim restoring the snapshot. Before 086113a each had a
// goroutine of its own, so the Log recorded a snapshot's deletion request
// as soon as its own goroutine got to it; now it waits, every time, for the
// requeue to hand each claim restoring that snapshot to the library's
// handler (and for any requeue of the notifications queued before). A
// claim that arrives in that window, after the deletion request and in its
// second, is decided while the Log does not know the deletion:
// CreatedAfterDeletion answers "not known", and ServesDespiteDeletion
// serves it, from a snapshot being deleted (the defect the Log was made
// for: test/faults TestSnapshotDeletedMidRestore).

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/requeue"
	"github.com/xns-csi/csi-provisioner/test/discoverytest"
)

// TestReview35TheLogKnowsASnapshotsDeletionBeforeItsClaimsAreRequeued:
// the wiring of build (caches, policy, protection, provisioner,
// wireEvents) on fake clients, with a stand-in for the library's claim
// handler registered as the library registers it (through the requeue
// wrapper). When a snapshot's deletion request arrives, the claims
// restoring it are re-queued to that handler; at that moment a claim that
// was never seen (created after the request arrived) must be ordered
// after it. FAILS at 086113a: the Log has not recorded the deletion yet.
// Passes (100 runs of 100) with the snapshot fanout's handlers in the
// other order, w.order.SourceHandler() first, as on the claim informer.
func TestReview35TheLogKnowsASnapshotsDeletionBeforeItsClaimsAreRequeued(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w := review24bWiring(t, false, func(c *buildConfig) {
		c.snapshotDiscovery = discoverytest.New(snapshotResources)
		c.pollInterval = 10 * time.Millisecond
	})
	w.newProvisioner(ctx)
	if err := w.wireEvents(); err != nil {
		t.Fatal(err)
	}

	type order struct{ after, known bool }
	var before atomic.Int32
	decided := make(chan order, 64)
	late := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "late", UID: "uid-late"}}
	if _, err := w.claims.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(o, n any) {
		claim, ok := n.(*v1.PersistentVolumeClaim)
		if !ok || o != n || claim.Name != "restore" {
			return // not a requeue
		}
		snap, err := w.snapshots.GetSnapshot("ns", "snap")
		if err != nil || snap == nil || snap.DeletionTimestamp == nil {
			before.Add(1) // requeued before the deletion request arrived
			return
		}
		after, known := w.order.CreatedAfterDeletion(late, snap)
		select {
		case decided <- order{after, known}:
		default:
		}
	}}); err != nil {
		t.Fatal(err)
	}

	snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "snap", UID: "uid-snap",
		Finalizers: []string{"snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection"}}}
	if _, err := w.cfg.snapshots.SnapshotV1().VolumeSnapshots("ns").Create(ctx, snap, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	group, class := "snapshot.storage.k8s.io", "sc"
	restore := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "restore", UID: types.UID("uid-restore"),
			Annotations: map[string]string{"volume.kubernetes.io/storage-provisioner": w.cfg.identity.name}},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &class,
			AccessModes:   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:     v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			DataSource:    &v1.TypedLocalObjectReference{APIGroup: &group, Kind: "VolumeSnapshot", Name: "snap"},
			DataSourceRef: &v1.TypedObjectReference{APIGroup: &group, Kind: "VolumeSnapshot", Name: "snap"}},
	}
	if _, err := w.cfg.kube.CoreV1().PersistentVolumeClaims("ns").Create(ctx, restore, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The claims first, so that the requeues the snapshot cache makes on
	// its own (the snapshot's addition, then SnapshotsSynced once both its
	// caches synced) find the claim, and are over before the deletion.
	w.informers.factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), w.informers.claims.HasSynced, w.informers.volumes.HasSynced) {
		t.Fatal("claims never synced")
	}
	go w.snapshots.Run(ctx)
	select {
	case <-w.snapshots.Settled():
	case <-time.After(30 * time.Second):
		t.Fatal("the snapshot cache never settled")
	}
	waitFor35(t, "the snapshot in the cache", func() bool {
		s, err := w.snapshots.GetSnapshot("ns", "snap")
		return err == nil && s != nil && !w.snapshots.ReadsDirectly()
	})
	waitFor35(t, "the claim indexed under its snapshot", func() bool {
		objs, err := w.informers.claims.GetIndexer().ByIndex(requeue.SourceIndex, requeue.SourceKey(datasource.Source{
			APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "ns", Name: "snap"}))
		return err == nil && len(objs) == 1
	})

	waitFor35(t, "the requeues of the snapshot's addition and of its cache's sync", func() bool { return before.Load() >= 2 })

	deleting := snap.DeepCopy()
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	if _, err := w.cfg.snapshots.SnapshotV1().VolumeSnapshots("ns").Update(ctx, deleting, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-decided:
		if !got.known || !got.after {
			t.Errorf("while the claims restoring the snapshot are re-queued for its deletion request, a claim never seen "+
				"before is ordered (after %v, known %v); want after the deletion, known: the Log records the deletion "+
				"only after the requeue (fanout order in wireEvents)", got.after, got.known)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the claim restoring the snapshot was never re-queued for its deletion request")
	}
}

func waitFor35(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
