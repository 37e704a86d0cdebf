package sourceprotection

import (
	"context"
	"sync"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapfake "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/fake"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/pkg/datasource"
	"github.com/xns-csi/csi-provisioner/pkg/referencegrant"
	"github.com/xns-csi/csi-provisioner/pkg/requeue"
)

// grantsFor allows exactly the claim namespaces listed.
type grantsFor map[string]bool

func (g grantsFor) Check(ref referencegrant.Reference) referencegrant.Decision {
	return referencegrant.Decision{Allowed: g[ref.FromNamespace]}
}

// noVolumes is a PV lister in which no PV exists.
type noVolumes struct {
	corelisters.PersistentVolumeLister
}

func (noVolumes) Get(name string) (*v1.PersistentVolume, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "persistentvolumes"}, name)
}

func pendingClaim(namespace, name, sourceNamespace string) *v1.PersistentVolumeClaim {
	group := datasource.SnapshotGroup
	ref := &v1.TypedObjectReference{APIGroup: &group, Kind: datasource.SnapshotKind, Name: "snap"}
	if sourceNamespace != "" {
		ref.Namespace = &sourceNamespace
	}
	return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID(name)},
		Spec: v1.PersistentVolumeClaimSpec{DataSourceRef: ref}}
}

func TestInUse(t *testing.T) {
	snap := datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "prod", Name: "snap"}
	tests := []struct {
		name   string
		claims []*v1.PersistentVolumeClaim
		grants grantsFor
		want   bool
	}{
		{"a pending claim in the snapshot's namespace keeps it", []*v1.PersistentVolumeClaim{pendingClaim("prod", "a", "")}, nil, true},
		{"a pending claim with a grant keeps it", []*v1.PersistentVolumeClaim{pendingClaim("test", "a", "prod")}, grantsFor{"test": true}, true},
		{"a pending claim without a grant does not keep another namespace's snapshot",
			[]*v1.PersistentVolumeClaim{pendingClaim("test", "a", "prod")}, grantsFor{}, false},
		{"no claim, no use", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{requeue.SourceIndex: requeue.IndexBySource})
			for _, c := range tt.claims {
				if err := indexer.Add(c); err != nil {
					t.Fatal(err)
				}
			}
			p := New(Config{Claims: indexer, Volumes: noVolumes{}, Grants: tt.grants,
				VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }})
			if got := p.inUse(snap); got != tt.want {
				t.Errorf("inUse() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestConcurrentProtectSendsOnePatch(t *testing.T) {
	snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: "prod", ResourceVersion: "1"}}
	client := snapfake.NewSimpleClientset(snap)
	p := New(Config{SnapshotClient: client, Snapshots: staleCache{snap}})
	src := datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "prod", Name: "snap"}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Protect(context.Background(), src); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	patches := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "patch" {
			patches++
		}
	}
	if patches != 1 {
		t.Errorf("%d patches for 20 concurrent restores of one snapshot, want 1", patches)
	}
}

// staleCache always returns the snapshot as it was, as a lagging informer
// would right after the patch.
type staleCache struct{ snap *snapv1.VolumeSnapshot }

func (s staleCache) GetSnapshot(string, string) (*snapv1.VolumeSnapshot, error) { return s.snap, nil }
