package snapshotcache

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapfake "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/xns-csi/csi-provisioner/pkg/optionalapi"
	"github.com/xns-csi/csi-provisioner/test/discoverytest"
)

func TestMain(m *testing.M) {
	// The snapshot fake clientset never ends a watch-list with its bookmark.
	os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	os.Exit(m.Run())
}

var served = discoverytest.Resources("snapshot.storage.k8s.io/v1", "volumesnapshots", "volumesnapshotcontents")

func TestCacheWorksOnceTheSnapshotCRDsAreServed(t *testing.T) {
	snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: "prod",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	content := &snapv1.VolumeSnapshotContent{ObjectMeta: metav1.ObjectMeta{Name: "content"}}
	disc := discoverytest.New()
	var syncs atomic.Int32
	c := New(Config{Client: snapfake.NewSimpleClientset(snap, content), Discovery: disc, PollInterval: 10 * time.Millisecond,
		OnSynced: func() { syncs.Add(1) }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx)

	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := c.GetSnapshot("prod", "snap")
		return errors.Is(err, optionalapi.ErrNotServed), nil
	}); err != nil {
		t.Fatal("GetSnapshot without the CRD never said the API is not served")
	}
	disc.Serve(served)
	// The two informers start and sync independently; OnSynced says both have.
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return syncs.Load() > 0, nil
	}); err != nil {
		t.Fatal("OnSynced was never called after the CRDs were served")
	}
	if n := syncs.Load(); n != 1 {
		t.Errorf("OnSynced was called %d times, want once both caches synced", n)
	}
	var got *snapv1.VolumeSnapshot
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		var err error
		got, err = c.GetSnapshot("prod", "snap")
		return err == nil && got != nil, nil
	})
	if err != nil {
		t.Fatal("the snapshot never became readable after the CRD was served")
	}
	if len(got.ManagedFields) != 0 {
		t.Error("managed fields should be dropped from the cache")
	}
	if c, err := c.GetContent("content"); err != nil || c == nil {
		t.Errorf("GetContent = %v, %v", c, err)
	}
	if s, err := c.GetSnapshot("prod", "absent"); err != nil || s != nil {
		t.Errorf("an absent snapshot = %v, %v; want nil, nil", s, err)
	}
}
