package sourceprotection

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapfake "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/fake"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kuberuntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/requeue"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/inflight"
)

// liveCache reads snapshots from the fake API server itself: a snapshot
// cache that is never behind.
type liveCache struct{ client *snapfake.Clientset }

func (c liveCache) GetSnapshot(namespace, name string) (*snapv1.VolumeSnapshot, error) {
	snap, err := c.client.SnapshotV1().VolumeSnapshots(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return snap, err
}

func snapshotSource(name string) datasource.Source {
	return datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "prod", Name: name}
}

// TestDeletedSourcesLeaveNoRecord: nightly backups restored for tests and
// rotated away, and claims cloned once and deleted, must not leave the
// protector's record of its last write to them behind.
func TestDeletedSourcesLeaveNoRecord(t *testing.T) {
	const n = 20
	var snaps, claims []kuberuntime.Object
	for i := range n {
		snaps = append(snaps, &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: fmt.Sprintf("backup-%d", i), ResourceVersion: "1"}})
		claims = append(claims, &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: fmt.Sprintf("data-%d", i), ResourceVersion: "1"}})
	}
	snapClient, kube := snapfake.NewSimpleClientset(snaps...), kubefake.NewClientset(claims...)
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{requeue.SourceIndex: requeue.IndexBySource})
	for _, c := range claims {
		if err := indexer.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	p := New(Config{Client: kube, SnapshotClient: snapClient, Snapshots: liveCache{snapClient}, Claims: indexer, Volumes: noVolumes{},
		InFlight: inflight.New(), VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }})
	defer p.queue.ShutDown()
	ctx := context.Background()
	for i := range n {
		for _, src := range []datasource.Source{snapshotSource(fmt.Sprintf("backup-%d", i)),
			{Kind: datasource.ClaimKind, Namespace: "prod", Name: fmt.Sprintf("data-%d", i)}} {
			if err := p.Protect(ctx, src); err != nil {
				t.Fatal(err)
			}
			if err := p.release(ctx, src); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(p.writes.last) == 0 {
		t.Fatal("nothing recorded: the test does not exercise the record")
	}

	for i := range n {
		p.SnapshotHandler().OnDelete(snaps[i])
		p.ClaimHandler().OnDelete(cache.DeletedFinalStateUnknown{Key: "prod/data", Obj: claims[i]})
	}
	if got := len(p.writes.last); got != 0 {
		t.Errorf("the protector keeps the last write of %d deleted sources, want none", got)
	}
	if got := len(p.writes.locks); got != 0 {
		t.Errorf("%d source locks left, want none", got)
	}
}

// TestTheRecordOfAWriteEndsOnceTheCacheShowsIt: a source protected once
// and kept for long (a golden snapshot, a template claim) is recorded only
// until the informer shows the write; an older version the informer
// delivers late keeps the record, which is still newer than the cache.
func TestTheRecordOfAWriteEndsOnceTheCacheShowsIt(t *testing.T) {
	snapAt := func(rv string) *snapv1.VolumeSnapshot {
		return &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "snap", ResourceVersion: rv}}
	}
	claimAt := func(rv string) *v1.PersistentVolumeClaim {
		return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "data", ResourceVersion: rv}}
	}
	tests := []struct {
		name    string
		src     datasource.Source
		handler func(*Protector) cache.ResourceEventHandler
		at      func(rv string) metav1.Object
	}{
		{"snapshot", prodSnap, (*Protector).SnapshotHandler, func(rv string) metav1.Object { return snapAt(rv) }},
		{"claim", prodClaim, (*Protector).ClaimHandler, func(rv string) metav1.Object { return claimAt(rv) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(Config{})
			defer p.queue.ShutDown()
			h := tt.handler(p)
			p.writes.wrote(tt.src, tt.at("4"), tt.at("5"))
			h.OnUpdate(tt.at("3"), tt.at("4"))
			if len(p.writes.last) != 1 {
				t.Fatal("the record ended when the informer delivered the version the write replaced")
			}
			h.OnUpdate(tt.at("4"), tt.at("5"))
			if len(p.writes.last) != 0 {
				t.Error("the record outlived the informer showing the write")
			}
		})
	}
}

// BenchmarkMemoryPerRestoredSnapshot reports the heap that source
// protection keeps for each snapshot it protected once and that still
// exists (retained-B/source), with snapshots as the API server returns
// them: managed fields, kubectl's last-applied annotation, a status.
func BenchmarkMemoryPerRestoredSnapshot(b *testing.B) {
	const sources = 1000
	var perSource float64
	for range b.N {
		perSource = retainedPerSource(b, sources)
	}
	b.ReportMetric(perSource, "retained-B/source")
}

// retainedPerSource protects n snapshots once with a new protector and
// returns how many bytes of heap per snapshot the protector alone keeps.
func retainedPerSource(b *testing.B, n int) float64 {
	before := heapAlloc()
	objs := make([]kuberuntime.Object, 0, n)
	for i := range n {
		objs = append(objs, appliedSnapshot(fmt.Sprintf("backup-%d", i)))
	}
	client := snapfake.NewSimpleClientset(objs...)
	p := New(Config{SnapshotClient: client, Snapshots: liveCache{client}})
	defer p.queue.ShutDown()
	for i := range n {
		if err := p.Protect(context.Background(), snapshotSource(fmt.Sprintf("backup-%d", i))); err != nil {
			b.Fatal(err)
		}
	}
	p.cfg, objs, client = Config{}, nil, nil // what is left is the protector's
	after := heapAlloc()
	runtime.KeepAlive(p)
	return (float64(after) - float64(before)) / float64(n)
}

func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// appliedSnapshot is a snapshot created with kubectl apply and made ready
// by the snapshot-controller, as the API server returns it.
func appliedSnapshot(name string) *snapv1.VolumeSnapshot {
	claim, class, content := "data", "csi-snapclass", "snapcontent-"+name
	ready, size := true, resource.MustParse("10Gi")
	created := metav1.NewTime(time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC))
	applied := fmt.Sprintf(`{"apiVersion":"snapshot.storage.k8s.io/v1","kind":"VolumeSnapshot","metadata":{"annotations":{},`+
		`"labels":{"app":"nightly-backup","backup.example.com/schedule":"nightly"},"name":%q,"namespace":"prod"},`+
		`"spec":{"source":{"persistentVolumeClaimName":%q},"volumeSnapshotClassName":%q}}`, name, claim, class)
	fields := func(json string) *metav1.FieldsV1 { return &metav1.FieldsV1{Raw: []byte(json)} }
	return &snapv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: name, UID: types.UID("5f0c6a7e-8d1b-4c2e-9a3f-" + strings.Repeat("0", 12)),
			ResourceVersion: "1", Generation: 1, CreationTimestamp: created,
			Labels:      map[string]string{"app": "nightly-backup", "backup.example.com/schedule": "nightly"},
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": applied},
			Finalizers: []string{"snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection",
				"snapshot.storage.kubernetes.io/volumesnapshot-bound-protection"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "snapshot.storage.k8s.io/v1",
					Time: &created, FieldsType: "FieldsV1", FieldsV1: fields(`{"f:metadata":{"f:annotations":{".":{},` +
						`"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:app":{},"f:backup.example.com/schedule":{}}},` +
						`"f:spec":{".":{},"f:source":{".":{},"f:persistentVolumeClaimName":{}},"f:volumeSnapshotClassName":{}}}`)},
				{Manager: "snapshot-controller", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "snapshot.storage.k8s.io/v1",
					Time: &created, FieldsType: "FieldsV1", FieldsV1: fields(`{"f:metadata":{"f:finalizers":{".":{},` +
						`"v:\"snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection\"":{},` +
						`"v:\"snapshot.storage.kubernetes.io/volumesnapshot-bound-protection\"":{}}}}`)},
				{Manager: "snapshot-controller", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "snapshot.storage.k8s.io/v1",
					Time: &created, FieldsType: "FieldsV1", Subresource: "status", FieldsV1: fields(`{"f:status":{".":{},` +
						`"f:boundVolumeSnapshotContentName":{},"f:creationTime":{},"f:readyToUse":{},"f:restoreSize":{}}}`)},
			}},
		Spec: snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: &claim},
			VolumeSnapshotClassName: &class},
		Status: &snapv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: &content, CreationTime: &created,
			ReadyToUse: &ready, RestoreSize: &size},
	}
}
