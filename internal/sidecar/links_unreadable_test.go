package sidecar

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// A snapshot restored through a VolumeSnapshotLink is protected by the
// links' finalizer, which only a sidecar that can read the links may
// release: while the link cache cannot be read (not synced yet after a
// restart or a leader change, its list refused, its CRD no longer served),
// every claim restoring through a link looks absent, and "no link, so no
// claim" would let the snapshot go under a restore.

var linksResource = schema.GroupResource{Group: datasource.SnapshotGroup, Resource: "volumesnapshotlinks"}

// updateSnapshot changes prod/<snapshot>.
func (e *env) updateSnapshot(snapshot string, change func(*snapv1.VolumeSnapshot)) {
	e.t.Helper()
	snap, err := e.snaps.SnapshotV1().VolumeSnapshots("prod").Get(e.ctx, snapshot, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	change(snap)
	if _, err := e.snaps.SnapshotV1().VolumeSnapshots("prod").Update(e.ctx, snap, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// protectedByLinks adds the links' finalizer to prod/<snapshot>, as the
// sidecar that started a restore through a link left it.
func protectedByLinks(snap *snapv1.VolumeSnapshot) {
	snap.Finalizers = append(snap.Finalizers, datasource.LinkSnapshotFinalizer)
}

// deletionRequested marks the snapshot deleted, as the API server does
// while finalizers hold it.
func deletionRequested(snap *snapv1.VolumeSnapshot) {
	snap.DeletionTimestamp = &metav1.Time{Time: time.Now()}
}

// restoreThroughLink creates the granted link test/<snapshot>-link to the
// ready snapshot prod/<snapshot>, and the claim test/<claim> restoring
// through it.
func (e *env) restoreThroughLink(snapshot, claim string) *v1.PersistentVolumeClaim {
	e.t.Helper()
	e.createSnapshot("prod", snapshot, true)
	e.createLinkGrant("prod", snapshot+"-links", datasource.SnapshotGroup, datasource.LinkKind, "test", snapshot)
	e.createLink("test", snapshot+"-link", "prod", snapshot)
	return e.createClaim("test", claim, throughLink(snapshot+"-link"))
}

// restoredBeforeTheRestart gives the claim its bound PV, as when the
// restore finished but the sidecar stopped before it released the source.
func (e *env) restoredBeforeTheRestart(claim *v1.PersistentVolumeClaim) {
	e.t.Helper()
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvName(claim)},
		Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: v1.PersistentVolumeSource{
			CSI: &v1.CSIPersistentVolumeSource{Driver: driverName, VolumeHandle: volumeName(claim)}}}}
	if _, err := e.kube.CoreV1().PersistentVolumes().Create(e.ctx, pv, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.bind(claim, pv.Name)
}

// hasLinkFinalizer reports whether prod/<snapshot> still carries the
// links' finalizer.
func (e *env) hasLinkFinalizer(snapshot string) bool {
	return hasString(e.snapshotFinalizers("prod", snapshot), datasource.LinkSnapshotFinalizer)
}

// keptWhileUnreadable waits until source protection has decided on every
// snapshot written so far and checks that those named still carry the
// links' finalizer.
func (e *env) keptWhileUnreadable(snapshots ...string) {
	e.t.Helper()
	e.protectionSeen()
	for _, s := range snapshots {
		if !e.hasLinkFinalizer(s) {
			e.t.Fatalf("snapshot prod/%s lost the links' finalizer while the VolumeSnapshotLink cache could not be read", s)
		}
	}
	if n := e.releases.Load(); n != 0 {
		e.t.Fatalf("%d snapshot finalizers released while the VolumeSnapshotLink cache could not be read", n)
	}
}

// TestRestartWithTheLinkCacheNotSyncedKeepsLinkProtectedSnapshots: the
// sidecar starts while a restore through a link is pending and the owner
// has requested the snapshot's deletion; the claim and volume caches sync,
// the link cache's list has not come back. The snapshot keeps its
// finalizer until the link cache has synced, and then until the claim has
// its volume. Another snapshot, whose restore through a link finished
// before the restart, is released once the link cache has synced, though
// nothing else changes.
func TestRestartWithTheLinkCacheNotSyncedKeepsLinkProtectedSnapshots(t *testing.T) {
	listed := make(chan struct{})
	var claim *v1.PersistentVolumeClaim
	entered, create := make(chan struct{}), make(chan struct{})
	e := startEnv(t, withLinks(), knownSnapshots("prod/foo-backup", "prod/done-backup"), oneProtectionWorker(),
		beforeStart(recordReleases), beforeStart(func(e *env) {
			claim = e.restoreThroughLink("foo-backup", "foo-testing")
			e.updateSnapshot("foo-backup", func(s *snapv1.VolumeSnapshot) { protectedByLinks(s); deletionRequested(s) })
			e.restoredBeforeTheRestart(e.restoreThroughLink("done-backup", "done"))
			e.updateSnapshot("done-backup", func(s *snapv1.VolumeSnapshot) { protectedByLinks(s); deletionRequested(s) })
			e.driver.SetCreateVolumeHook(blockFirstCreate(entered, create))
			e.links.PrependReactor("list", "volumesnapshotlinks", func(clienttesting.Action) (bool, runtime.Object, error) {
				<-listed // the link cache's first list is slow to come back
				return false, nil, nil
			})
		}))
	var once sync.Once
	listedNow := func() { once.Do(func() { close(listed) }) }
	t.Cleanup(listedNow)

	e.keptWhileUnreadable("foo-backup", "done-backup")

	listedNow()
	e.waitFor("the snapshot restored before the restart to be released", func() bool { return !e.hasLinkFinalizer("done-backup") })
	e.await(entered, "CreateVolume of the pending restore")
	e.protectionSeen()
	if !e.hasLinkFinalizer("foo-backup") {
		t.Fatal("the snapshot of a restore in progress was released once the link cache synced")
	}
	close(create)
	e.waitForPV(claim)
	e.waitFor("the snapshot to be released once the claim has its volume", func() bool { return !e.hasLinkFinalizer("foo-backup") })
}

// TestRefusedLinkListKeepsLinkProtectedSnapshots: the sidecar may not list
// VolumeSnapshotLinks (its RBAC lost the rule) when the owner of a
// snapshot that a pending claim restores through a link requests its
// deletion. Once the sidecar may list links again, the claim is restored
// and the snapshot released. The link was created in the second of the
// deletion request: the link cache, listing it only after the deletion
// arrived, cannot tell which came first (package deletionorder), so the
// claim keeps the promise of whole seconds.
func TestRefusedLinkListKeepsLinkProtectedSnapshots(t *testing.T) {
	var forbidden atomic.Bool
	var refused atomic.Int32
	forbidden.Store(true)
	var claim *v1.PersistentVolumeClaim
	second := metav1.NewTime(time.Now().Truncate(time.Second))
	e := startEnv(t, withLinks(), knownSnapshots("prod/foo-backup"), oneProtectionWorker(),
		beforeStart(recordReleases), beforeStart(func(e *env) {
			claim = e.restoreThroughLink("foo-backup", "foo-testing")
			e.updateSnapshot("foo-backup", protectedByLinks)
			link, err := e.links.SnapshotV1alpha1().VolumeSnapshotLinks("test").Get(e.ctx, "foo-backup-link", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			link.CreationTimestamp = second
			if _, err := e.links.SnapshotV1alpha1().VolumeSnapshotLinks("test").Update(e.ctx, link, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			e.links.PrependReactor("list", "volumesnapshotlinks", func(clienttesting.Action) (bool, runtime.Object, error) {
				if forbidden.Load() {
					refused.Add(1)
					return true, nil, apierrors.NewForbidden(linksResource, "", errors.New("RBAC: access denied"))
				}
				return false, nil, nil
			})
		}))
	// The link cache is marked refused before the permission is checked
	// again.
	e.waitFor("the link list to be refused twice", func() bool { return refused.Load() >= 2 })
	e.updateSnapshot("foo-backup", func(s *snapv1.VolumeSnapshot) { s.DeletionTimestamp = &second })
	e.keptWhileUnreadable("foo-backup")

	forbidden.Store(false) // the cluster admin applies the RBAC again
	e.waitForPV(claim)
	e.waitFor("the snapshot to be released once the claim has its volume", func() bool { return !e.hasLinkFinalizer("foo-backup") })
}

// TestLinkCRDNoLongerServedKeepsLinkProtectedSnapshots: a running sidecar
// has synced its link cache when the VolumeSnapshotLink CRD stops being
// served (its watch ends, and lists answer NotFound); then the owner of a
// snapshot that a pending claim restores through a link requests its
// deletion. The snapshot keeps its finalizer; once the CRD is served again,
// the claim is restored (its snapshot became ready) and the snapshot
// released.
func TestLinkCRDNoLongerServedKeepsLinkProtectedSnapshots(t *testing.T) {
	var served unservable
	var claim *v1.PersistentVolumeClaim
	e := startEnv(t, withLinks(), knownSnapshots("prod/foo-backup"), oneProtectionWorker(),
		beforeStart(recordReleases), beforeStart(func(e *env) {
			claim = e.restoreThroughLink("foo-backup", "foo-testing")
			markNotReady(e, "foo-backup")
			e.updateSnapshot("foo-backup", protectedByLinks)
			served.install(e)
		}))
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", "not ready") // the link was read

	served.stop(e)
	e.updateSnapshot("foo-backup", deletionRequested)
	e.keptWhileUnreadable("foo-backup")

	served.serve()
	markReady(e, "foo-backup")
	e.waitForPV(claim)
	e.waitFor("the snapshot to be released once the claim has its volume", func() bool { return !e.hasLinkFinalizer("foo-backup") })
}

// unservable makes the links client answer as an API server whose
// VolumeSnapshotLink CRD stops being served: the open watches end, and
// lists and watches answer NotFound until it is served again.
type unservable struct {
	unserved atomic.Bool
	refused  atomic.Int32
	mu       sync.Mutex
	watches  []watch.Interface
}

func (u *unservable) install(e *env) {
	notFound := func() (bool, error) {
		if !u.unserved.Load() {
			return false, nil
		}
		u.refused.Add(1)
		return true, apierrors.NewNotFound(linksResource, "")
	}
	e.links.PrependReactor("list", "volumesnapshotlinks", func(clienttesting.Action) (bool, runtime.Object, error) {
		handled, err := notFound()
		return handled, nil, err
	})
	e.links.PrependWatchReactor("volumesnapshotlinks", func(action clienttesting.Action) (bool, watch.Interface, error) {
		if handled, err := notFound(); handled {
			return true, nil, err
		}
		w, err := e.links.Tracker().Watch(action.GetResource(), action.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		u.mu.Lock()
		defer u.mu.Unlock()
		u.watches = append(u.watches, w)
		return true, w, nil
	})
}

// stop stops serving the CRD and waits until the sidecar's link cache has
// seen it: its informer was answered NotFound twice, so it has handled the
// first answer, which makes the cache unreadable.
func (u *unservable) stop(e *env) {
	e.t.Helper()
	u.unserved.Store(true)
	u.mu.Lock()
	for _, w := range u.watches {
		w.Stop()
	}
	u.mu.Unlock()
	e.waitFor("the link informer to be told the CRD is not served", func() bool { return u.refused.Load() >= 2 })
}

func (u *unservable) serve() { u.unserved.Store(false) }

func markNotReady(e *env, snapshot string) { setReady(e, snapshot, false) }
func markReady(e *env, snapshot string)    { setReady(e, snapshot, true) }

// setReady sets readyToUse of prod/<snapshot> and its content.
func setReady(e *env, snapshot string, ready bool) {
	e.t.Helper()
	e.updateSnapshot(snapshot, func(s *snapv1.VolumeSnapshot) { s.Status.ReadyToUse = &ready })
	contents := e.snaps.SnapshotV1().VolumeSnapshotContents()
	content, err := contents.Get(e.ctx, "content-prod-"+snapshot, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	content.Status.ReadyToUse = &ready
	if _, err := contents.Update(e.ctx, content, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}
