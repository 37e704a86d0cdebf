package requeue

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

func ptr[T any](v T) *T { return &v }

func claim(name, volumeName string, ref *v1.TypedObjectReference) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test", UID: types.UID("uid-" + name)},
		Spec:       v1.PersistentVolumeClaimSpec{VolumeName: volumeName, DataSourceRef: ref},
	}
}

func snapshotRef(ns, name string) *v1.TypedObjectReference {
	r := &v1.TypedObjectReference{APIGroup: ptr(datasource.SnapshotGroup), Kind: datasource.SnapshotKind, Name: name}
	if ns != "" {
		r.Namespace = ptr(ns)
	}
	return r
}

// recorder counts the claims the controller's handler was asked to queue.
type recorder struct {
	mu     sync.Mutex
	queued []string
}

func (r *recorder) OnAdd(any, bool) {}
func (r *recorder) OnDelete(any)    {}
func (r *recorder) OnUpdate(_, n any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queued = append(r.queued, n.(*v1.PersistentVolumeClaim).Name)
}
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.queued
	r.queued = nil
	return q
}

func startClaims(t *testing.T, objs ...*v1.PersistentVolumeClaim) (*Claims, *recorder) {
	t.Helper()
	client := fake.NewSimpleClientset()
	for _, o := range objs {
		if _, err := client.CoreV1().PersistentVolumeClaims(o.Namespace).Create(context.Background(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	inf := informers.NewSharedInformerFactory(client, 0).Core().V1().PersistentVolumeClaims().Informer()
	claims, err := NewClaims(inf)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if _, err := claims.AddEventHandlerWithResyncPeriod(rec, 0); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go claims.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), claims.HasSynced) {
		t.Fatal("cache did not sync")
	}
	rec.take() // initial adds are not re-queues
	return claims, rec
}

func TestGrantChangeRequeuesOnlyClaimsWaitingOnThatNamespace(t *testing.T) {
	claims, rec := startClaims(t,
		claim("cross", "", snapshotRef("prod", "snap")),
		claim("other-ns", "", snapshotRef("staging", "snap")),
		claim("bound", "pv-1", snapshotRef("prod", "snap")),
		claim("local", "", snapshotRef("", "snap")),
	)
	if n := claims.GrantsChanged("prod"); n != 1 {
		t.Fatalf("GrantsChanged(prod) re-queued %d claims, want 1", n)
	}
	if got := rec.take(); len(got) != 1 || got[0] != "cross" {
		t.Errorf("queued %v, want [cross]", got)
	}
	if n := claims.GrantsChanged(""); n != 2 {
		t.Errorf("GrantsChanged(\"\") re-queued %d claims, want every claim waiting on a grant (2)", n)
	}
}

func TestSnapshotEventsRequeueItsClaims(t *testing.T) {
	claims, rec := startClaims(t,
		claim("cross", "", snapshotRef("prod", "snap")),
		claim("unrelated", "", snapshotRef("prod", "other")),
	)
	h := claims.SnapshotHandler()
	snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: "prod"}}
	h.OnAdd(snap, false)
	if got := rec.take(); len(got) != 1 || got[0] != "cross" {
		t.Fatalf("snapshot add queued %v, want [cross]", got)
	}
	withFinalizer := snap.DeepCopy()
	withFinalizer.Finalizers = []string{"x"}
	h.OnUpdate(snap, withFinalizer)
	if got := rec.take(); len(got) != 0 {
		t.Errorf("a finalizer-only update queued %v, want nothing", got)
	}
	ready := snap.DeepCopy()
	ready.Status = &snapv1.VolumeSnapshotStatus{ReadyToUse: ptr(true)}
	h.OnUpdate(snap, ready)
	if got := rec.take(); len(got) != 1 {
		t.Errorf("a status update queued %v, want [cross]", got)
	}
	content := &snapv1.VolumeSnapshotContent{Spec: snapv1.VolumeSnapshotContentSpec{
		VolumeSnapshotRef: v1.ObjectReference{Namespace: "prod", Name: "snap"}}}
	claims.ContentHandler().OnUpdate(content, content)
	if got := rec.take(); len(got) != 1 {
		t.Errorf("a content update queued %v, want [cross]", got)
	}
}

func TestSnapshotsSyncedRequeuesEveryClaimRestoringASnapshot(t *testing.T) {
	claims, rec := startClaims(t,
		claim("cross", "", snapshotRef("prod", "a")),
		claim("local", "", snapshotRef("", "b")),
		claim("bound", "pv-1", snapshotRef("prod", "a")),
		claim("plain", "", nil),
	)
	if n := claims.SnapshotsSynced(); n != 2 {
		t.Fatalf("SnapshotsSynced() re-queued %d claims, want the 2 pending restores", n)
	}
	if got := rec.take(); len(got) != 2 {
		t.Errorf("queued %v", got)
	}
}

// links is a link cache holding test/to-prod → prod/snap and
// test/local → test/snap.
type links struct{}

func (links) LinksTo(namespace, name string) ([]*snapv1alpha1.VolumeSnapshotLink, error) {
	switch namespace + "/" + name {
	case "prod/snap":
		return []*snapv1alpha1.VolumeSnapshotLink{link("to-prod", "prod")}, nil
	case "test/snap":
		return []*snapv1alpha1.VolumeSnapshotLink{link("local", "")}, nil
	}
	return nil, nil
}

func (links) LinksInto(namespace string) ([]*snapv1alpha1.VolumeSnapshotLink, error) {
	if namespace == "prod" {
		return []*snapv1alpha1.VolumeSnapshotLink{link("to-prod", "prod")}, nil
	}
	return nil, nil
}

func link(name, snapNamespace string) *snapv1alpha1.VolumeSnapshotLink {
	return &snapv1alpha1.VolumeSnapshotLink{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test"},
		Spec: snapv1alpha1.VolumeSnapshotLinkSpec{Source: snapv1alpha1.VolumeSnapshotLinkSource{Name: "snap", Namespace: snapNamespace}}}
}

func linkRef(name string) *v1.TypedObjectReference {
	return &v1.TypedObjectReference{APIGroup: ptr(datasource.SnapshotGroup), Kind: datasource.LinkKind, Name: name}
}

func TestLinkClaimsAreRequeuedByTheirLinkSnapshotAndGrants(t *testing.T) {
	claims, rec := startClaims(t,
		claim("via-prod", "", linkRef("to-prod")),
		claim("via-local", "", linkRef("local")),
		claim("missing-link", "", linkRef("absent")),
		claim("bound", "pv-1", linkRef("to-prod")),
		claim("direct", "", snapshotRef("", "snap")),
	)
	claims.SetLinks(links{})
	snap := func(ns string) *snapv1.VolumeSnapshot {
		return &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: ns}}
	}
	tests := []struct {
		name  string
		event func()
		want  []string
	}{
		{"the link's snapshot appears", func() { claims.SnapshotHandler().OnAdd(snap("prod"), false) }, []string{"via-prod"}},
		{"a snapshot named directly and through a link", func() { claims.SnapshotHandler().OnAdd(snap("test"), false) },
			[]string{"direct", "via-local"}},
		{"a grant in the snapshot's namespace changes", func() { claims.GrantsChanged("prod") }, []string{"via-prod"}},
		{"a grant elsewhere changes", func() { claims.GrantsChanged("staging") }, nil},
		{"the missing link is created", func() { claims.LinkHandler().OnAdd(link("absent", "prod"), false) }, []string{"missing-link"}},
		{"the link cache syncs", func() { claims.LinksSynced() }, []string{"missing-link", "via-local", "via-prod"}},
	}
	for _, tt := range tests {
		tt.event()
		got := rec.take()
		slices.Sort(got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: queued %v, want %v", tt.name, got, tt.want)
		}
	}
}

func cloneRef(ns, name string) *v1.TypedObjectReference {
	r := &v1.TypedObjectReference{Kind: datasource.ClaimKind, Name: name}
	if ns != "" {
		r.Namespace = ptr(ns)
	}
	return r
}

// TestCrossNamespaceClonesAreRequeuedByTheirGrantsAndSource: a claim
// cloning a claim of another namespace waits for the grants there and for
// its source, as a restore waits for its snapshot.
func TestCrossNamespaceClonesAreRequeuedByTheirGrantsAndSource(t *testing.T) {
	claims, rec := startClaims(t,
		claim("cross", "", cloneRef("prod", "src")),
		claim("local", "", cloneRef("", "src")),
		claim("bound", "pv-1", cloneRef("prod", "src")),
	)
	src := func(ns, volumeName string) *v1.PersistentVolumeClaim {
		c := claim("src", volumeName, nil)
		c.Namespace = ns
		return c
	}
	tests := []struct {
		name  string
		event func()
		want  []string
	}{
		{"a grant in the source's namespace changes", func() { claims.GrantsChanged("prod") }, []string{"cross"}},
		{"a grant in the clone's namespace changes", func() { claims.GrantsChanged("test") }, nil},
		{"the grant cache syncs", func() { claims.GrantsChanged("") }, []string{"cross"}},
		{"the source gets bound", func() { claims.CloneSourceHandler().OnUpdate(src("prod", ""), src("prod", "pv-src")) }, []string{"cross"}},
		{"a claim of the same name in the clone's namespace gets bound",
			func() { claims.CloneSourceHandler().OnUpdate(src("test", ""), src("test", "pv-src")) }, []string{"local"}},
	}
	for _, tt := range tests {
		tt.event()
		if got := rec.take(); !slices.Equal(got, tt.want) {
			t.Errorf("%s: queued %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestRequeueAfterQueuesTheClaimLater: a claim whose changed refusal is
// told later is queued then, as the informer holds it at that time.
func TestRequeueAfterQueuesTheClaimLater(t *testing.T) {
	claims, rec := startClaims(t, claim("paced", "", snapshotRef("prod", "snap")))
	obj, _, _ := claims.GetIndexer().GetByKey("test/paced")
	claims.RequeueAfter(obj.(*v1.PersistentVolumeClaim), 10*time.Millisecond)
	var got []string
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		got = append(got, rec.take()...)
		return len(got) > 0, nil
	}); err != nil || !slices.Equal(got, []string{"paced"}) {
		t.Errorf("queued %v (%v), want [paced]", got, err)
	}
}

// TestClonesAreRequeuedByTheirSourceVolume: the PV bound to a source claim
// re-queues the claim's clones when it appears, goes, or changes what the
// clone decision reads, so that a clone refused while the PV cache was
// behind the claim cache does not wait for the resync (issue 21, defect 8).
func TestClonesAreRequeuedByTheirSourceVolume(t *testing.T) {
	claims, rec := startClaims(t,
		claim("cross", "", cloneRef("prod", "src")),
		claim("local", "", cloneRef("", "src")),
		claim("bound", "pv-1", cloneRef("prod", "src")),
	)
	h := claims.CloneSourceVolumeHandler()
	volume := func(ns, claim string, phase v1.PersistentVolumePhase) *v1.PersistentVolume {
		pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-src"}, Status: v1.PersistentVolumeStatus{Phase: phase}}
		if claim != "" {
			pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: ns, Name: claim, UID: types.UID("uid-" + claim)}
		}
		return pv
	}
	bound, pending := volume("prod", "src", v1.VolumeBound), volume("prod", "src", v1.VolumePending)
	labeled := bound.DeepCopy()
	labeled.Labels = map[string]string{"a": "b"}
	tests := []struct {
		name  string
		event func()
		want  []string
	}{
		{"the source's volume appears", func() { h.OnAdd(bound, false) }, []string{"cross"}},
		{"a volume of another claim appears", func() { h.OnAdd(volume("prod", "other", v1.VolumeBound), false) }, nil},
		{"a volume bound to no claim appears", func() { h.OnAdd(volume("", "", v1.VolumeAvailable), false) }, nil},
		{"the source's volume becomes Bound", func() { h.OnUpdate(pending, bound) }, []string{"cross"}},
		{"a volume gets bound to the source", func() { h.OnUpdate(volume("", "", v1.VolumeAvailable), bound) }, []string{"cross"}},
		{"the source's volume is bound to another claim",
			func() { h.OnUpdate(bound, volume("test", "src", v1.VolumeBound)) }, []string{"local"}},
		{"the source's volume is resynced or labeled", func() { h.OnUpdate(bound, bound); h.OnUpdate(bound, labeled) }, nil},
		{"the source's volume is deleted", func() { h.OnDelete(cache.DeletedFinalStateUnknown{Obj: bound}) }, []string{"cross"}},
	}
	for _, tt := range tests {
		tt.event()
		if got := rec.take(); !slices.Equal(got, tt.want) {
			t.Errorf("%s: queued %v, want %v", tt.name, got, tt.want)
		}
	}
}
