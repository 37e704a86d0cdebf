package sourceprotection

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapfake "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/fake"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	"github.com/xns-csi/csi-provisioner/internal/shared/requeue"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/inflight"
)

// grants answers every check with one reason.
type grants referencegrant.Reason

func (g grants) Check(referencegrant.Reference) referencegrant.Decision {
	return referencegrant.Decision{Allowed: g == grants(referencegrant.ReasonAllowed), Reason: referencegrant.Reason(g)}
}

// noVolumes is a PV lister in which no PV exists.
type noVolumes struct {
	corelisters.PersistentVolumeLister
}

func (noVolumes) Get(name string) (*v1.PersistentVolume, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "persistentvolumes"}, name)
}

var (
	prodSnap  = datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "prod", Name: "snap"}
	prodClaim = datasource.Source{Kind: datasource.ClaimKind, Namespace: "prod", Name: "data"}
	deletedAt = metav1.NewTime(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
)

type claimOption func(*v1.PersistentVolumeClaim)

// pendingClaim is a claim in namespace restoring or cloning src, naming
// src's namespace explicitly when it is another one.
func pendingClaim(namespace, name string, src datasource.Source, opts ...claimOption) *v1.PersistentVolumeClaim {
	ref := &v1.TypedObjectReference{Kind: src.Kind, Name: src.Name}
	if src.APIGroup != "" {
		ref.APIGroup = &src.APIGroup
	}
	if src.Namespace != namespace {
		ref.Namespace = &src.Namespace
	}
	c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID(name),
		CreationTimestamp: metav1.NewTime(deletedAt.Add(-time.Hour))}, Spec: v1.PersistentVolumeClaimSpec{DataSourceRef: ref}}
	for _, o := range opts {
		o(c)
	}
	return c
}

func createdAfterTheDeletion(c *v1.PersistentVolumeClaim) {
	c.CreationTimestamp = metav1.NewTime(deletedAt.Add(time.Minute))
}

// beingDeleted is the source object with a deletion requested at deletedAt
// and the source's protection finalizer.
func beingDeleted(src datasource.Source) metav1.Object {
	return &metav1.ObjectMeta{Namespace: src.Namespace, Name: src.Name, DeletionTimestamp: &deletedAt,
		Finalizers: []string{src.Finalizer()}}
}

func TestInUse(t *testing.T) {
	tests := []struct {
		name     string
		src      datasource.Source
		obj      metav1.Object // the source as last seen; nil: not being deleted
		claims   []*v1.PersistentVolumeClaim
		grants   grants
		gateOff  bool
		inFlight bool
		want     bool
	}{
		{"a pending claim in the snapshot's namespace keeps it", prodSnap, nil,
			[]*v1.PersistentVolumeClaim{pendingClaim("prod", "a", prodSnap)}, "", false, false, true},
		{"a pending claim with a grant keeps it", prodSnap, nil,
			[]*v1.PersistentVolumeClaim{pendingClaim("test", "a", prodSnap)}, grants(referencegrant.ReasonAllowed), false, false, true},
		{"a pending claim without a grant does not keep another namespace's snapshot", prodSnap, nil,
			[]*v1.PersistentVolumeClaim{pendingClaim("test", "a", prodSnap)}, grants(referencegrant.ReasonNotGranted), false, false, false},
		{"a pending claim whose grant cannot be read keeps it: unknown is in use", prodSnap, nil,
			[]*v1.PersistentVolumeClaim{pendingClaim("test", "a", prodSnap)}, grants(referencegrant.ReasonUnavailable), false, false, true},
		{"a pending clone in another namespace with a grant keeps its source claim", prodClaim, nil,
			[]*v1.PersistentVolumeClaim{pendingClaim("test", "x", prodClaim)}, grants(referencegrant.ReasonAllowed), false, false, true},
		{"a pending clone without a grant does not keep another namespace's claim", prodClaim, nil,
			[]*v1.PersistentVolumeClaim{pendingClaim("test", "x", prodClaim)}, grants(referencegrant.ReasonNotGranted), false, false, false},
		{"a pending clone whose grant cannot be read keeps its source claim", prodClaim, nil,
			[]*v1.PersistentVolumeClaim{pendingClaim("test", "x", prodClaim)}, grants(referencegrant.ReasonUnavailable), false, false, true},
		{"a pending clone in another namespace keeps a source claim whose deletion was requested after it", prodClaim, beingDeleted(prodClaim),
			[]*v1.PersistentVolumeClaim{pendingClaim("test", "x", prodClaim)}, grants(referencegrant.ReasonAllowed), false, false, true},
		{"a clone created after the deletion request does not keep the source claim", prodClaim, beingDeleted(prodClaim),
			[]*v1.PersistentVolumeClaim{pendingClaim("test", "x", prodClaim, createdAfterTheDeletion)}, grants(referencegrant.ReasonAllowed), false, false, false},
		{"a clone naming another namespace with the gate off is never provisioned", prodClaim, nil,
			[]*v1.PersistentVolumeClaim{pendingClaim("test", "x", prodClaim)}, grants(referencegrant.ReasonAllowed), true, false, false},
		{"a claim naming another namespace with the gate off is never provisioned", prodSnap, nil,
			[]*v1.PersistentVolumeClaim{pendingClaim("test", "a", prodSnap)}, grants(referencegrant.ReasonAllowed), true, false, false},
		{"a pending claim keeps a snapshot whose deletion was requested after it", prodSnap, beingDeleted(prodSnap),
			[]*v1.PersistentVolumeClaim{pendingClaim("prod", "a", prodSnap)}, "", false, false, true},
		{"a claim created after the deletion request does not keep the snapshot", prodSnap, beingDeleted(prodSnap),
			[]*v1.PersistentVolumeClaim{pendingClaim("prod", "a", prodSnap, createdAfterTheDeletion)}, "", false, false, false},
		{"a CreateVolume whose outcome is unknown keeps the snapshot after its claim is gone", prodSnap, nil,
			nil, "", false, true, true},
		{"no claim, no use", prodSnap, nil, nil, "", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			indexer := claimIndexer(t, tt.claims...)
			attempts := inflight.New()
			if tt.inFlight {
				attempts.Begin(&inflight.Attempt{Claim: "gone", Source: tt.src})
			}
			p := New(Config{Claims: indexer, Volumes: noVolumes{}, InFlight: attempts,
				Policy:     claimsource.Policy{CrossNamespace: !tt.gateOff, Grants: tt.grants},
				VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }})
			obj := tt.obj
			if obj == nil {
				obj = &metav1.ObjectMeta{Namespace: tt.src.Namespace, Name: tt.src.Name}
			}
			if got := p.inUse(tt.src, obj); got != tt.want {
				t.Errorf("inUse() = %v, want %v", got, tt.want)
			}
		})
	}
}

// claimIndexer is a PVC indexer with requeue.SourceIndex holding claims.
func claimIndexer(t *testing.T, claims ...*v1.PersistentVolumeClaim) cache.Indexer {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{requeue.SourceIndex: requeue.IndexBySource})
	for _, c := range claims {
		if err := indexer.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	return indexer
}

func TestConcurrentProtectSendsOnePatch(t *testing.T) {
	snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: "prod", ResourceVersion: "1"}}
	client := snapfake.NewSimpleClientset(snap)
	p := New(Config{SnapshotClient: client, Snapshots: staleCache{snap}})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if err := p.Protect(context.Background(), prodSnap); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := patches(client); n != 1 {
		t.Errorf("%d patches for 20 concurrent restores of one snapshot, want 1", n)
	}
}

// TestProtectAfterAReleaseTheCacheHasNotSeenWrites: a release removed the
// finalizer and the cache still shows it. A Protect that trusted the cache
// would let CreateVolume run with the snapshot unprotected.
func TestProtectAfterAReleaseTheCacheHasNotSeenWrites(t *testing.T) {
	snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: "prod", ResourceVersion: "1",
		Finalizers: []string{datasource.SnapshotFinalizer}}}
	client := snapfake.NewSimpleClientset(snap)
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{requeue.SourceIndex: requeue.IndexBySource})
	p := New(Config{SnapshotClient: client, Snapshots: staleCache{snap}, Claims: indexer, Volumes: noVolumes{},
		InFlight: inflight.New(), VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }})
	ctx := context.Background()

	if err := p.release(ctx, prodSnap); err != nil {
		t.Fatal(err)
	}
	if f := finalizers(t, client); slices.Contains(f, datasource.SnapshotFinalizer) {
		t.Fatalf("finalizers after the release = %v, want it released (nothing uses the snapshot)", f)
	}
	if err := p.Protect(ctx, prodSnap); err != nil {
		t.Fatal(err)
	}
	if f := finalizers(t, client); !slices.Contains(f, datasource.SnapshotFinalizer) {
		t.Errorf("finalizers after Protect = %v, want %s: Protect trusted the stale cache", f, datasource.SnapshotFinalizer)
	}
}

// TestNothingIsReleasedBeforeTheCachesSync: before the claims cache has
// synced it shows no claim, and every source would look unused.
func TestNothingIsReleasedBeforeTheCachesSync(t *testing.T) {
	snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: "prod", ResourceVersion: "1",
		Finalizers: []string{datasource.SnapshotFinalizer}}}
	client := snapfake.NewSimpleClientset(snap)
	reads := &watchedCache{staleCache: staleCache{snap}, reads: make(chan struct{}, 16)}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{requeue.SourceIndex: requeue.IndexBySource})
	var synced atomic.Bool
	asked := make(chan struct{}, 1)
	p := New(Config{SnapshotClient: client, Snapshots: reads, Claims: indexer, Volumes: noVolumes{}, InFlight: inflight.New(),
		Synced: []cache.InformerSynced{func() bool {
			select {
			case asked <- struct{}{}:
			default:
			}
			return synced.Load()
		}},
		VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx, 1)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	p.Recheck(prodSnap) // the snapshot carries the finalizer, as after a restart
	await(t, asked, "Run to ask whether the caches have synced")

	// The initial list brings the pending claim; then the cache has synced.
	if err := indexer.Add(pendingClaim("prod", "a", prodSnap)); err != nil {
		t.Fatal(err)
	}
	synced.Store(true)
	await(t, reads.reads, "the snapshot to be looked at")
	p.Recheck(prodSnap) // queued behind the first look, so a second read means the first is done
	await(t, reads.reads, "the snapshot to be looked at again")
	if n := patches(client); n != 0 {
		t.Errorf("%d patches: the snapshot was released while a claim restores it", n)
	}
}

// watchedCache is a staleCache that reports each read on reads, whose
// buffer must hold every read the test does not receive.
type watchedCache struct {
	staleCache
	reads chan struct{}
}

func (c *watchedCache) GetSnapshot(namespace, name string) (*snapv1.VolumeSnapshot, error) {
	c.reads <- struct{}{}
	return c.staleCache.GetSnapshot(namespace, name)
}

// staleCache always returns the snapshot as it was, as a lagging informer
// would right after a patch.
type staleCache struct{ snap *snapv1.VolumeSnapshot }

func (s staleCache) GetSnapshot(string, string) (*snapv1.VolumeSnapshot, error) { return s.snap, nil }

func patches(client *snapfake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "patch" {
			n++
		}
	}
	return n
}

func finalizers(t *testing.T, client *snapfake.Clientset) []string {
	t.Helper()
	s, err := client.SnapshotV1().VolumeSnapshots("prod").Get(context.Background(), "snap", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.Finalizers
}

// await receives from ch, failing the test rather than hanging.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestAnUnusedSourceLingers: after its last use a source keeps its
// finalizer for Config.Linger, so that the next restore of it writes
// nothing; a deletion request ends the linger at once.
func TestAnUnusedSourceLingers(t *testing.T) {
	const linger = 5 * time.Second
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	newProtector := func(snap *snapv1.VolumeSnapshot) (*Protector, *snapfake.Clientset) {
		client := snapfake.NewSimpleClientset(snap)
		indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{requeue.SourceIndex: requeue.IndexBySource})
		p := New(Config{SnapshotClient: client, Snapshots: staleCache{snap}, Claims: indexer, Volumes: noVolumes{},
			InFlight: inflight.New(), VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) },
			Linger: linger, Now: func() time.Time { return now }})
		t.Cleanup(p.queue.ShutDown)
		return p, client
	}
	protected := func(client *snapfake.Clientset) bool {
		return slices.Contains(finalizers(t, client), datasource.SnapshotFinalizer)
	}
	ctx := context.Background()
	snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: "prod", ResourceVersion: "1",
		Finalizers: []string{datasource.SnapshotFinalizer}}}

	p, client := newProtector(snap)
	if err := p.release(ctx, prodSnap); err != nil || !protected(client) {
		t.Fatalf("first release found the source unused: err %v, protected %v; want it kept for the linger", err, protected(client))
	}
	now = now.Add(linger - time.Millisecond)
	if err := p.release(ctx, prodSnap); err != nil || !protected(client) {
		t.Fatalf("release within the linger: err %v, protected %v; want it kept", err, protected(client))
	}
	if err := p.Protect(ctx, prodSnap); err != nil || patches(client) != 0 {
		t.Fatalf("Protect of a lingering source: err %v, %d patches; want none", err, patches(client))
	}
	now = now.Add(time.Second) // the linger started again with the new use
	if err := p.release(ctx, prodSnap); err != nil || !protected(client) {
		t.Fatalf("release after a new use: err %v, protected %v; want it kept for a new linger", err, protected(client))
	}
	now = now.Add(linger)
	if err := p.release(ctx, prodSnap); err != nil || protected(client) {
		t.Fatalf("release after the linger: err %v, protected %v; want it released", err, protected(client))
	}

	deleting := snap.DeepCopy()
	deleting.DeletionTimestamp = &deletedAt
	p, client = newProtector(deleting)
	if err := p.release(ctx, prodSnap); err != nil || protected(client) {
		t.Fatalf("release of a source being deleted: err %v, protected %v; want it released at once", err, protected(client))
	}
}

// BenchmarkInUse: whether a snapshot is in use while n claims restore from
// it, as source protection asks on every change of one of them (during a
// burst of n restores, n times). The answer stops at the first pending
// claim that holds the snapshot: at 1,000 claims 0.19 ms, where judging
// every claim took 3.8 ms (what is left grows with n is the index lookup
// that gathers the claims).
func BenchmarkInUse(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{requeue.SourceIndex: requeue.IndexBySource})
			for i := range n {
				if err := indexer.Add(pendingClaim("test", fmt.Sprintf("c-%d", i), prodSnap)); err != nil {
					b.Fatal(err)
				}
			}
			p := New(Config{Claims: indexer, Volumes: noVolumes{},
				Policy:     claimsource.Policy{CrossNamespace: true, Grants: grants(referencegrant.ReasonAllowed)},
				VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }})
			obj := &metav1.ObjectMeta{Namespace: prodSnap.Namespace, Name: prodSnap.Name}
			for b.Loop() {
				if !p.inUse(prodSnap, obj) {
					b.Fatal("not in use")
				}
			}
		})
	}
}
