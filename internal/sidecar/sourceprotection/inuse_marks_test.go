package sourceprotection

import (
	"context"
	"slices"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapfake "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/fake"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/inflight"
)

// processOf is the protector of one sidecar process, holder, over the
// snapshots of client, with no claim and no CreateVolume of its own unless
// attempts says so.
func processOf(t *testing.T, client *snapfake.Clientset, holder string, attempts *inflight.Registry, ttl time.Duration) *Protector {
	return New(Config{SnapshotClient: client, Snapshots: liveCache{client}, Claims: claimIndexer(t), Volumes: noVolumes{},
		InFlight: attempts, VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) },
		Holder: holder, InUseTTL: ttl})
}

func snapshotObject(t *testing.T, client *snapfake.Clientset) *snapv1.VolumeSnapshot {
	t.Helper()
	s, err := client.SnapshotV1().VolumeSnapshots("prod").Get(context.Background(), "snap", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAnotherProcessesMarkHoldsTheSource: no claim uses the snapshot, whose
// deletion is requested, but another process marked it in use: a
// CreateVolume of that process may be reading it for a claim since deleted
// (issue 21, defect 6). The finalizer stays while the mark has not expired.
func TestAnotherProcessesMarkHoldsTheSource(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		name     string
		holder   string
		mark     string
		released bool
	}{
		{"a mark that has not expired keeps the finalizer", "node-a", now.Add(time.Minute).Format(time.RFC3339Nano), false},
		{"a mark that has expired holds nothing, and goes first", "node-a", now.Add(-time.Minute).Format(time.RFC3339Nano), true},
		{"a mark whose time cannot be read holds: it cannot be told to have expired", "node-a", "soon", false},
		{"this sidecar's mark that it did not make (its predecessor did) holds nothing, and goes first", "node-b",
			now.Add(time.Minute).Format(time.RFC3339Nano), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: "prod", ResourceVersion: "1",
				DeletionTimestamp: &deletedAt, Finalizers: []string{datasource.SnapshotFinalizer},
				Annotations: map[string]string{inUseKey(tt.holder): tt.mark, "team": "a"}}}
			client := snapfake.NewSimpleClientset(snap)
			p := processOf(t, client, "node-b", inflight.New(), 0)
			if err := p.release(context.Background(), prodSnap); err != nil {
				t.Fatal(err)
			}
			got := snapshotObject(t, client)
			if released := !slices.Contains(got.Finalizers, datasource.SnapshotFinalizer); released != tt.released {
				t.Errorf("released = %v, want %v (finalizers %v)", released, tt.released, got.Finalizers)
			}
			if _, marked := got.Annotations[inUseKey(tt.holder)]; marked == tt.released {
				t.Errorf("annotations %v: an expired mark must go with the release, any other stay", got.Annotations)
			}
			if got.Annotations["team"] != "a" {
				t.Errorf("annotations %v: the owner's annotation was lost", got.Annotations)
			}
		})
	}
}

// TestACallInFlightMarksItsSourceUntilItEnds: node-a's process protects the
// snapshot for a CreateVolume; node-b's process, which knows nothing of
// that call, keeps the snapshot after the claim is gone and its deletion
// requested, while node-a renews its mark; once the call ends node-a
// removes its mark and node-b releases the snapshot.
func TestACallInFlightMarksItsSourceUntilItEnds(t *testing.T) {
	const ttl = 600 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: "prod", ResourceVersion: "1"}}
	client := snapfake.NewSimpleClientset(snap)
	attempts := inflight.New()
	nodeA, nodeB := processOf(t, client, "node-a", attempts, ttl), processOf(t, client, "node-b", inflight.New(), ttl)
	attempts.OnEnd(nodeA.Recheck)
	go nodeA.Run(ctx, 0) // its marks only: nodeB releases, called below
	attempts.Begin(&inflight.Attempt{Claim: "x", Namespace: "test", Name: "x", Source: prodSnap})
	if err := nodeA.Protect(ctx, prodSnap); err != nil {
		t.Fatal(err)
	}
	first := snapshotObject(t, client).Annotations[inUseKey("node-a")]
	if first == "" || !slices.Contains(snapshotObject(t, client).Finalizers, datasource.SnapshotFinalizer) {
		t.Fatalf("after Protect: %+v, want the finalizer and node-a's mark", snapshotObject(t, client).ObjectMeta)
	}

	deleting := snapshotObject(t, client)
	deleting.DeletionTimestamp = &deletedAt
	if _, err := client.SnapshotV1().VolumeSnapshots("prod").Update(ctx, deleting, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "node-a to renew its mark", func() bool {
		if err := nodeB.release(ctx, prodSnap); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(snapshotObject(t, client).Finalizers, datasource.SnapshotFinalizer) {
			t.Fatal("node-b released the snapshot while node-a's CreateVolume may read it")
		}
		return snapshotObject(t, client).Annotations[inUseKey("node-a")] != first
	})

	attempts.End("x")
	waitUntil(t, "node-a to remove its mark", func() bool {
		_, marked := snapshotObject(t, client).Annotations[inUseKey("node-a")]
		return !marked
	})
	if err := nodeB.release(ctx, prodSnap); err != nil {
		t.Fatal(err)
	}
	if f := snapshotObject(t, client).Finalizers; slices.Contains(f, datasource.SnapshotFinalizer) {
		t.Errorf("finalizers %v after the call ended and its mark went, want it released", f)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}
