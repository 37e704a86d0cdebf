package sourceprotection

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapfake "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/fake"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/requeue"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/inflight"
)

// With the upstream csi-provisioner's RBAC (update, no patch, on claims and
// snapshots) source protection writes with an update; with neither it
// reports a ForbiddenError.

// rbacCase is one set of verbs refused on the source's resource.
type rbacCase struct {
	name      string
	forbidden []string // verbs the API server refuses
	conflicts int      // updates refused with a conflict first
	wantErr   string   // "" or the verbs ForbiddenError names, e.g. "patch or update"
	wantCalls []string // the verbs sent, in order
}

var rbacCases = []rbacCase{
	{name: "a patch is enough when allowed", wantCalls: []string{"patch"}},
	{name: "a forbidden patch falls back to an update of the object read afresh",
		forbidden: []string{"patch"}, wantCalls: []string{"patch", "get", "update"}},
	{name: "an update conflict reads the object again",
		forbidden: []string{"patch"}, conflicts: 2, wantCalls: []string{"patch", "get", "update", "get", "update", "get", "update"}},
	{name: "patch and update forbidden is a ForbiddenError", forbidden: []string{"patch", "update"},
		wantErr: "patch or update", wantCalls: []string{"patch", "get", "update"}},
	{name: "patch and get forbidden is a ForbiddenError", forbidden: []string{"patch", "get"},
		wantErr: "patch or get", wantCalls: []string{"patch", "get"}},
}

// rbac records the verbs sent for resource and refuses those of c.
func rbac(fake *clienttesting.Fake, resource string, c rbacCase, calls *[]string) {
	conflicts := c.conflicts
	fake.PrependReactor("*", resource, func(action clienttesting.Action) (bool, runtime.Object, error) {
		verb := action.GetVerb()
		*calls = append(*calls, verb)
		gr := schema.GroupResource{Group: action.GetResource().Group, Resource: resource}
		switch {
		case slices.Contains(c.forbidden, verb):
			return true, nil, apierrors.NewForbidden(gr, "x", errors.New("RBAC: access denied"))
		case verb == "update" && conflicts > 0:
			conflicts--
			return true, nil, apierrors.NewConflict(gr, "x", errors.New("the object has been modified"))
		}
		return false, nil, nil
	})
}

func checkRBACCase(t *testing.T, c rbacCase, err error, calls []string) {
	t.Helper()
	var forbidden *ForbiddenError
	switch {
	case c.wantErr == "" && err != nil:
		t.Fatalf("error = %v", err)
	case c.wantErr != "" && (!errors.As(err, &forbidden) || !strings.Contains(err.Error(), "may not "+c.wantErr)):
		t.Fatalf("error = %v, want a ForbiddenError naming %q", err, c.wantErr)
	}
	if !slices.Equal(calls, c.wantCalls) {
		t.Errorf("API calls = %v, want %v", calls, c.wantCalls)
	}
}

func TestProtectSnapshotWithUpstreamRBAC(t *testing.T) {
	for _, c := range rbacCases {
		t.Run(c.name, func(t *testing.T) {
			snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: "prod", ResourceVersion: "1",
				Finalizers: []string{"other"}}, Spec: snapv1.VolumeSnapshotSpec{VolumeSnapshotClassName: new(string)}}
			client := snapfake.NewSimpleClientset(snap)
			var calls []string
			rbac(&client.Fake, "volumesnapshots", c, &calls)
			trimmed := &snapv1.VolumeSnapshot{ObjectMeta: *snap.ObjectMeta.DeepCopy()} // as the cache keeps it
			p := New(Config{SnapshotClient: client, Snapshots: staleCache{trimmed}})

			err := p.Protect(context.Background(), prodSnap)
			checkRBACCase(t, c, err, calls)
			got, _ := client.Tracker().Get(snapv1.SchemeGroupVersion.WithResource("volumesnapshots"), "prod", "snap")
			s := got.(*snapv1.VolumeSnapshot)
			if want := c.wantErr == ""; slices.Contains(s.Finalizers, datasource.SnapshotFinalizer) != want {
				t.Errorf("finalizers = %v, protected = %v", s.Finalizers, want)
			}
			if !slices.Contains(s.Finalizers, "other") || s.Spec.VolumeSnapshotClassName == nil {
				t.Errorf("the write lost what the cache does not keep: %+v", s)
			}
		})
	}
}

func TestReleaseClaimWithUpstreamRBAC(t *testing.T) {
	for _, c := range rbacCases {
		t.Run(c.name, func(t *testing.T) {
			src := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "prod", ResourceVersion: "1",
				Finalizers: []string{datasource.CloneFinalizer, "kubernetes.io/pvc-protection"}}}
			client := kubefake.NewClientset(src)
			var calls []string
			rbac(&client.Fake, "persistentvolumeclaims", c, &calls)
			claims := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{requeue.SourceIndex: requeue.IndexBySource})
			if err := claims.Add(src); err != nil {
				t.Fatal(err)
			}
			p := New(Config{Client: client, Claims: claims, Volumes: noVolumes{}, InFlight: inflight.New(),
				VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }})

			err := p.release(context.Background(), prodClaim)
			checkRBACCase(t, c, err, calls)
			obj, _ := client.Tracker().Get(v1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), "prod", "data")
			got := obj.(*v1.PersistentVolumeClaim)
			if want := c.wantErr != ""; slices.Contains(got.Finalizers, datasource.CloneFinalizer) != want ||
				!slices.Contains(got.Finalizers, "kubernetes.io/pvc-protection") {
				t.Errorf("finalizers = %v, want the clone finalizer kept = %v and the others all kept", got.Finalizers, want)
			}
		})
	}
}

// A release the RBAC forbids is not retried in a loop: the finalizer stays
// until the claim or snapshot changes or the informers resync.
func TestForbiddenReleaseIsNotRequeued(t *testing.T) {
	src := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "prod", ResourceVersion: "1",
		Finalizers: []string{datasource.CloneFinalizer}}}
	client := kubefake.NewClientset(src)
	var calls []string
	rbac(&client.Fake, "persistentvolumeclaims", rbacCase{forbidden: []string{"patch", "update"}}, &calls)
	claims := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{requeue.SourceIndex: requeue.IndexBySource})
	if err := claims.Add(src); err != nil {
		t.Fatal(err)
	}
	p := New(Config{Client: client, Claims: claims, Volumes: noVolumes{}, InFlight: inflight.New(),
		VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }})
	p.queue.Add(prodClaim)
	p.processNext(context.Background())
	if n := p.queue.NumRequeues(prodClaim); n != 0 || p.queue.Len() != 0 {
		t.Errorf("a forbidden release was requeued (%d requeues, %d queued)", n, p.queue.Len())
	}
}
