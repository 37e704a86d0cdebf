package snapshotcache

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapfake "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/fake"
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/typed/volumesnapshot/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"

	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
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
	if list, err := c.ListSnapshots(); !errors.Is(err, optionalapi.ErrNotServed) {
		t.Errorf("ListSnapshots without the CRD = %v, %v; want ErrNotServed", list, err)
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
	if list, err := c.ListSnapshots(); err != nil || len(list) != 1 || list[0].Name != "snap" {
		t.Errorf("ListSnapshots = %v, %v; want prod/snap", list, err)
	}
}

// contentServer is a fake API server with one snapshot and its content,
// whose RBAC forbids the watch of contents (upstream's RBAC), and their get
// too while the test says so.
type contentServer struct {
	*snapfake.Clientset
	forbidWatch, forbidGet atomic.Bool
	// fullLists and checks count the lists of contents: an informer's,
	// and the permission checks' lists of one object. (The fake clientset
	// does not record a list's limit.)
	fullLists, checks atomic.Int32
}

func newContentServer() *contentServer {
	snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: "prod"}}
	content := &snapv1.VolumeSnapshotContent{ObjectMeta: metav1.ObjectMeta{Name: "content",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "snapshot-controller"}}}}
	s := &contentServer{Clientset: snapfake.NewSimpleClientset(snap, content)}
	s.forbidWatch.Store(true)
	forbidden := func(verb string) error {
		return apierrors.NewForbidden(snapv1.SchemeGroupVersion.WithResource("volumesnapshotcontents").GroupResource(), "",
			errors.New(`User "system:serviceaccount:default:csi-provisioner" cannot `+verb+` resource "volumesnapshotcontents"`))
	}
	s.PrependWatchReactor("volumesnapshotcontents", func(clienttesting.Action) (bool, watch.Interface, error) {
		if s.forbidWatch.Load() {
			return true, nil, forbidden("watch")
		}
		return false, nil, nil
	})
	s.PrependReactor("get", "volumesnapshotcontents", func(clienttesting.Action) (bool, runtime.Object, error) {
		if s.forbidGet.Load() {
			return true, nil, forbidden("get")
		}
		return false, nil, nil
	})
	return s
}

// gets counts the GETs of contents.
func (s *contentServer) gets() int {
	n := 0
	for _, a := range s.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "volumesnapshotcontents" {
			n++
		}
	}
	return n
}

func (s *contentServer) SnapshotV1() snapshotv1.SnapshotV1Interface {
	return countingV1{SnapshotV1Interface: s.Clientset.SnapshotV1(), s: s}
}

type countingV1 struct {
	snapshotv1.SnapshotV1Interface
	s *contentServer
}

func (v countingV1) VolumeSnapshotContents() snapshotv1.VolumeSnapshotContentInterface {
	return countingContents{VolumeSnapshotContentInterface: v.SnapshotV1Interface.VolumeSnapshotContents(), s: v.s}
}

type countingContents struct {
	snapshotv1.VolumeSnapshotContentInterface
	s *contentServer
}

func (c countingContents) List(ctx context.Context, opts metav1.ListOptions) (*snapv1.VolumeSnapshotContentList, error) {
	if opts.Limit == 1 {
		c.s.checks.Add(1)
	} else {
		c.s.fullLists.Add(1)
	}
	return c.VolumeSnapshotContentInterface.List(ctx, opts)
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("timed out waiting until %s", what)
	}
}

// TestContentsAreReadWithGETWhileTheirWatchIsForbidden: with the upstream
// csi-provisioner's RBAC (get and list on contents, no watch), the content
// informer lists once and stops; contents are read with a GET each, and the
// cache takes over again once watch is granted.
func TestContentsAreReadWithGETWhileTheirWatchIsForbidden(t *testing.T) {
	s := newContentServer()
	var syncs atomic.Int32
	c := New(Config{Client: s, Discovery: discoverytest.New(served), PollInterval: 10 * time.Millisecond,
		OnSynced: func() { syncs.Add(1) }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx)

	var got *snapv1.VolumeSnapshotContent
	eventually(t, "the content is read with a GET", func() bool {
		var err error
		got, err = c.GetContent("content")
		return err == nil && got != nil && s.gets() > 0
	})
	if len(got.ManagedFields) != 0 {
		t.Error("a content read with a GET should be trimmed as the cache trims it")
	}
	if absent, err := c.GetContent("absent"); absent != nil || err != nil {
		t.Errorf("an absent content = %v, %v; want nil, nil", absent, err)
	}
	if !c.ReadsDirectly() {
		t.Error("ReadsDirectly() = false while contents are read with GETs")
	}
	eventually(t, "OnSynced is called: both kinds can be read", func() bool { return syncs.Load() > 0 })
	eventually(t, "the permission is checked twice", func() bool { return s.checks.Load() >= 2 })
	if n := s.fullLists.Load(); n != 1 {
		t.Errorf("contents were listed in full %d times while their watch is forbidden, want once", n)
	}

	s.forbidWatch.Store(false) // the cluster admin adds watch
	eventually(t, "the content cache is used again", func() bool {
		_, _, err := c.contents.Informer()
		return err == nil
	})
	if c.ReadsDirectly() {
		t.Error("ReadsDirectly() = true once the content cache is used again")
	}
	gets := s.gets()
	if got, err := c.GetContent("content"); err != nil || got == nil {
		t.Fatalf("GetContent from the cache = %v, %v", got, err)
	}
	if n := s.gets(); n != gets {
		t.Errorf("GetContent made %d GETs once the cache was back, want none", n-gets)
	}
}

func TestContentThatCannotBeReadAtAllSaysWhy(t *testing.T) {
	s := newContentServer()
	s.forbidGet.Store(true)
	c := New(Config{Client: s, Discovery: discoverytest.New(served), PollInterval: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx)

	var err error
	eventually(t, "GetContent fails", func() bool {
		_, err = c.GetContent("content")
		return errors.Is(err, optionalapi.ErrForbidden)
	})
	for _, want := range []string{"grant watch on volumesnapshotcontents.snapshot.storage.k8s.io",
		"reading it with a GET instead failed too", `cannot get resource "volumesnapshotcontents"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("GetContent() error = %q, want it to contain %q", err, want)
		}
	}
}
