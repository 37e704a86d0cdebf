package owner

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/ktesting"
)

const ns = "test-namespace"

// object is an object the fake API server serves, at its path.
type object struct {
	path  string
	meta  metav1.ObjectMeta
	owner *object
}

func newObject(path, name string, owner *object) *object {
	return &object{path: path, meta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + path)}, owner: owner}
}

// The objects of upstream's owner_test.go. Owners need not exist to be
// named: statefulset and deployment are never served.
var (
	statefulset     = &object{meta: metav1.ObjectMeta{Name: "foo", UID: "uid-statefulset"}}
	deployment      = &object{meta: metav1.ObjectMeta{Name: "foo", UID: "uid-deployment"}}
	replicaset      = newObject("/apis/apps/v1/namespaces/test-namespace/replicasets/foo", "foo", deployment)
	otherReplicaset = newObject("/apis/apps/v1/namespaces/test-namespace/replicasets/bar", "bar", deployment)
	yetAnotherRS    = newObject("/apis/apps/v1/namespaces/other-namespace/replicasets/foo", "foo", deployment)
	plainPod        = newObject("/api/v1/namespaces/test-namespace/pods/foo", "foo", nil)
	statefulsetPod  = newObject("/api/v1/namespaces/test-namespace/pods/foo", "foo", statefulset)
	deploymentPod   = newObject("/api/v1/namespaces/test-namespace/pods/foo", "foo", replicaset)
)

// TestResolve ports upstream's owner lookup cases (there named
// TestNodeTopology), through discovery and REST paths of a fake API server.
func TestResolve(t *testing.T) {
	ownedBy := map[*object]metav1.OwnerReference{
		statefulset: {APIVersion: "apps/v1", Kind: "StatefulSet", Name: "foo", UID: "uid-statefulset"},
		replicaset:  {APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "foo", UID: replicaset.meta.UID},
		deployment:  {APIVersion: "apps/v1", Kind: "Deployment", Name: "foo", UID: "uid-deployment"},
	}
	tests := map[string]struct {
		objects   []*object
		level     int
		want      *metav1.OwnerReference
		wantReads []string
	}{
		"empty": {level: 0},
		"pod-itself": {
			objects: []*object{plainPod}, level: 0,
			want:      &metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "foo", UID: plainPod.meta.UID},
			wantReads: []string{plainPod.path},
		},
		"no-parent": {objects: []*object{plainPod}, level: 1},
		"parent, which need not exist and is not read": {
			objects: []*object{statefulsetPod}, level: 1,
			want:      ptrTo(ownedBy[statefulset]),
			wantReads: []string{statefulsetPod.path},
		},
		"missing-parent":       {objects: []*object{deploymentPod}, level: 2},
		"wrong-parent":         {objects: []*object{deploymentPod, otherReplicaset}, level: 2},
		"another-wrong-parent": {objects: []*object{deploymentPod, yetAnotherRS}, level: 2},
		"grandparent, which need not exist and is not read": {
			objects: []*object{deploymentPod, replicaset}, level: 2,
			want:      ptrTo(ownedBy[deployment]),
			wantReads: []string{deploymentPod.path, replicaset.path},
		},
		"no owner at level -1, nothing read": {objects: []*object{deploymentPod}, level: -1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			api := newFakeAPI(t, tc.objects, ownedBy)
			client, err := kubernetes.NewForConfig(&rest.Config{Host: api.URL})
			if err != nil {
				t.Fatal(err)
			}

			got, err := Lookup(ctx, client, ns, "foo", tc.level)

			wantErr := tc.want == nil && tc.level >= 0
			if (err != nil) != wantErr {
				t.Fatalf("Lookup error %v, want an error: %v", err, wantErr)
			}
			if tc.want != nil {
				tc.want.Controller = ptrTo(true)
			}
			if !equalRefs(got, tc.want) {
				t.Errorf("Lookup = %+v, want %+v", got, tc.want)
			}
			if tc.wantReads != nil || tc.level < 0 {
				if reads := api.objectReads(); !slices.Equal(reads, tc.wantReads) {
					t.Errorf("read %v, want %v", reads, tc.wantReads)
				}
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

func equalRefs(a, b *metav1.OwnerReference) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Name == b.Name && a.UID == b.UID &&
		a.Controller != nil && b.Controller != nil && *a.Controller == *b.Controller && a.BlockOwnerDeletion == nil
}

// fakeAPI serves discovery for v1 and apps/v1 and the given objects, and
// records which objects were read.
type fakeAPI struct {
	*httptest.Server
	mu    sync.Mutex
	reads []string
}

func newFakeAPI(t *testing.T, objects []*object, refs map[*object]metav1.OwnerReference) *fakeAPI {
	discovery := map[string]metav1.APIResourceList{
		"/api/v1": {GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Namespaced: true, Kind: "Pod"}, {Name: "pods/status", Namespaced: true, Kind: "Pod"}}},
		"/apis/apps/v1": {GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "replicasets", Namespaced: true, Kind: "ReplicaSet"}, {Name: "deployments", Namespaced: true, Kind: "Deployment"},
			{Name: "statefulsets", Namespaced: true, Kind: "StatefulSet"}}},
	}
	served := map[string]metav1.ObjectMeta{}
	for _, o := range objects {
		meta := o.meta
		if o.owner != nil {
			ref := refs[o.owner]
			ref.Controller = ptrTo(true)
			meta.OwnerReferences = []metav1.OwnerReference{ref}
		}
		served[o.path] = meta
	}
	api := &fakeAPI{}
	api.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if list, ok := discovery[r.URL.Path]; ok {
			list.TypeMeta = metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}
			_ = json.NewEncoder(w).Encode(list)
			return
		}
		api.mu.Lock()
		api.reads = append(api.reads, r.URL.Path)
		api.mu.Unlock()
		meta, ok := served[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
				Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound})
			return
		}
		_ = json.NewEncoder(w).Encode(metav1.PartialObjectMetadata{ObjectMeta: meta})
	}))
	t.Cleanup(api.Close)
	return api
}

func (a *fakeAPI) objectReads() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.reads)
}
