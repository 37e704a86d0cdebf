package deletionorder

// Adversarial review of 373dbdd (Log.Delivering): with
// --cross-namespace-snapshot the Log is told to wait for two initial lists,
// the claims' (their handler registration's HasSynced) and the links'
// (linkcache.Cache.HandlersSynced). The links' is false for as long as the
// link cache has no informer whose list was handed to its handlers: the
// VolumeSnapshotLink CRD not installed, the link list refused by RBAC
// before a first sync, or any relist of a replaced informer. All that time
// every claim the Log's claim handler has not seen yet is "not known", and
// datasource.ServesDespiteDeletion falls back to whole seconds: a claim
// created after a snapshot's deletion request, in the same second, is
// served. Before 373dbdd such a claim was "seen now", after the deletion.

import (
	"context"
	"os"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/linkcache"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
	linkfake "github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned/fake"
	"github.com/xns-csi/csi-provisioner/test/discoverytest"
)

func TestMain(m *testing.M) {
	// The generated fake clientsets never end a watch-list with its bookmark.
	os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	os.Exit(m.Run())
}

// wiredLog is a Log wired as build.go wires it: the claims' handler on a
// claim informer that has synced and delivered its (empty) list, and, with
// links, the links' handler on a link cache whose CRD is not served.
func wiredLog(t *testing.T, links bool) *Log {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	l := New(nil)
	if links {
		c := linkcache.New(linkcache.Config{Client: linkfake.NewSimpleClientset(), Discovery: discoverytest.New(),
			PollInterval: 10 * time.Millisecond})
		c.AddHandler(l.LinkHandler())
		l.Delivering(&snapv1alpha1.VolumeSnapshotLink{}, c.HandlersSynced)
		go c.Run(ctx)
	}
	claims := informers.NewSharedInformerFactory(kubefake.NewClientset(), 0).Core().V1().PersistentVolumeClaims().Informer()
	reg, err := claims.AddEventHandler(l.ClaimHandler())
	if err != nil {
		t.Fatal(err)
	}
	l.Delivering(&v1.PersistentVolumeClaim{}, reg.HasSynced)
	go claims.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		t.Fatal("the claims' list was never delivered")
	}
	return l
}

// TestAClaimIsOrderedWhileTheLinkCacheCannotList: the snapshot's
// deletion request was seen arriving; then a claim restoring from it is
// created, in the same second, and the library's worker decides it before
// the Log's claim handler has run (each handler of the claim informer runs
// in its own goroutine). The claims' list was delivered long ago, so the
// claim cannot be one of it: it is new, created after the deletion, and
// must not be served. With the link CRD not served (or the link list
// refused), it is served.
func TestAClaimIsOrderedWhileTheLinkCacheCannotList(t *testing.T) {
	for _, tt := range []struct {
		name  string
		links bool
	}{
		{"without --cross-namespace-snapshot", false},
		{"with --cross-namespace-snapshot, the link CRD not served", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := wiredLog(t, tt.links)
			deletion := metav1.NewTime(time.Now().Truncate(time.Second))
			snap := &metav1.ObjectMeta{Name: "snap", Namespace: "prod", UID: "snap",
				Finalizers: []string{datasource.CrossNamespaceSnapshotFinalizer}} // held by an earlier restore still pending
			deleting := snap.DeepCopy()
			deleting.DeletionTimestamp = &deletion
			l.SourceHandler().OnUpdate(snap, deleting)

			late := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: "test", UID: "late", CreationTimestamp: deletion}}
			after, known := l.CreatedAfterDeletion(late, deleting)
			if !after || !known {
				t.Errorf("CreatedAfterDeletion(a claim first asked about after the deletion arrived) = (%v, %v), want (true, true)",
					after, known)
			}
			if datasource.ServesDespiteDeletion(deleting, datasource.CrossNamespaceSnapshotFinalizer, late, l) {
				t.Errorf("a snapshot whose deletion was requested serves a claim created after the request, in its second")
			}
		})
	}
}
