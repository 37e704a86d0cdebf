package snapshotwebhook

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	groupsnapv1beta2 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumegroupsnapshot/v1beta2"
	snapfake "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2/ktesting"

	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
	"github.com/xns-csi/csi-provisioner/internal/snapshotwebhook/snapshotvalidation"
	"github.com/xns-csi/csi-provisioner/test/discoverytest"
)

// fakeClient is a fake snapshot clientset with objs.
func fakeClient(t *testing.T, objs ...runtime.Object) *snapfake.Clientset {
	// The fake clientset never ends a watch-list with its bookmark.
	t.Setenv("KUBE_FEATURE_WatchListClient", "false")
	return snapfake.NewSimpleClientset(objs...)
}

// listWhenSynced runs c and returns its classes once it has synced.
func listWhenSynced(t *testing.T, c *classCache) []snapshotvalidation.Class {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.api.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	var got []snapshotvalidation.Class
	var err error
	if !eventually(func() bool { got, err = c.List(); return err == nil }) {
		t.Fatalf("the cache never synced: %v", err)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Name < got[j].Name })
	return got
}

func TestSnapshotClassCache(t *testing.T) {
	client := fakeClient(t, class("gold", "a.csi.io", snapshotvalidation.DefaultSnapshotClassAnnotation), class("plain", "a.csi.io", ""))
	c := newSnapshotClassCache(client, discoverytest.New(discoverytest.Resources("snapshot.storage.k8s.io/v1", snapshotClasses)))
	want := []snapshotvalidation.Class{{Name: "gold", Driver: "a.csi.io", Default: true}, {Name: "plain", Driver: "a.csi.io"}}
	if diff := cmp.Diff(want, listWhenSynced(t, c)); diff != "" {
		t.Errorf("classes (-want +got):\n%s", diff)
	}
}

// Clusters whose group snapshot CRDs predate v1 serve v1beta2 only.
func TestGroupSnapshotClassCacheReadsTheServedVersion(t *testing.T) {
	group := &groupsnapv1beta2.VolumeGroupSnapshotClass{ObjectMeta: metav1.ObjectMeta{Name: "group-gold",
		Annotations: map[string]string{snapshotvalidation.DefaultGroupSnapshotClassAnnotation: "true"}}, Driver: "a.csi.io"}
	client := fakeClient(t, group)
	c := newGroupSnapshotClassCache(client, discoverytest.New(discoverytest.Resources("groupsnapshot.storage.k8s.io/v1beta2", groupSnapshotClasses)))
	want := []snapshotvalidation.Class{{Name: "group-gold", Driver: "a.csi.io", Default: true}}
	if diff := cmp.Diff(want, listWhenSynced(t, c)); diff != "" {
		t.Errorf("classes (-want +got):\n%s", diff)
	}
}

func TestClassCacheSaysWhyItCannotBeRead(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c := newSnapshotClassCache(fakeClient(t), discoverytest.New())
	go c.api.Run(ctx)
	var err error
	if !eventually(func() bool { _, err = c.List(); return errors.Is(err, optionalapi.ErrNotServed) }) {
		t.Errorf("List without the CRD: %v, want %v", err, optionalapi.ErrNotServed)
	}
}
