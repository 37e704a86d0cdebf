package nodedeployment

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

const (
	baseDelay = 20 * time.Second // the flag defaults
	maxDelay  = 60 * time.Second
	// With the jitter fraction fixed at 0.5, the waits are 10s, 30s, 50s, 50s...
	jitter     = 0.5
	firstWait  = 10 * time.Second
	secondWait = 30 * time.Second
	thirdWait  = 50 * time.Second
	poll       = 200 * time.Millisecond // PollInterval(baseDelay)

	topologyKey = "topology.example.com/node"
	lastApplied = "kubectl.kubernetes.io/last-applied-configuration"
)

// world is an API server shared by the nodes' sidecars, a clock, and the
// nodes. Every API call is logged; a successful write reaches every node's
// claim cache at once, as the informers would deliver it.
type world struct {
	t     *testing.T
	clock *fakeClock

	mu      sync.Mutex
	claims  map[string]*v1.PersistentVolumeClaim // as stored by the API server
	rv      int
	calls   []string
	nodes   []*node
	classes cache.Indexer

	updateErr  error           // returned by every update, when set
	getBarrier *sync.WaitGroup // see raceGets
	barrierFor int             // GETs still to pass the barrier
}

// node is one node's sidecar: its Deployment and its claim cache.
type node struct {
	name   string
	d      *Deployment
	claims cache.Indexer
}

func newWorld(t *testing.T, objects ...runtime.Object) *world {
	w := &world{t: t, clock: newFakeClock(), claims: map[string]*v1.PersistentVolumeClaim{}, rv: 1,
		classes: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})}
	for _, obj := range objects {
		switch o := obj.(type) {
		case *v1.PersistentVolumeClaim:
			o = o.DeepCopy()
			o.ResourceVersion = strconv.Itoa(w.rv)
			w.claims[o.Namespace+"/"+o.Name] = o
		case *storagev1.StorageClass:
			must(t, w.classes.Add(o))
		default:
			t.Fatalf("unexpected object %T", obj)
		}
	}
	return w
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// addNode starts a sidecar on node name whose driver reports the topology
// segment {topologyKey: name}.
func (w *world) addNode(name string, configure ...func(*Config)) *node {
	n := &node{name: name, claims: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})}
	w.mu.Lock()
	for _, c := range w.claims {
		must(w.t, n.claims.Add(cached(c)))
	}
	w.nodes = append(w.nodes, n)
	w.mu.Unlock()
	client := kubefake.NewClientset()
	client.PrependReactor("*", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		return w.serve(name, action)
	})
	cfg := Config{
		Node:      Local{Name: name, NodeID: "id-" + name, Segment: map[string]string{topologyKey: name}},
		Client:    client,
		Claims:    corelisters.NewPersistentVolumeClaimLister(n.claims),
		Classes:   storagelisters.NewStorageClassLister(w.classes),
		BaseDelay: baseDelay, MaxDelay: maxDelay, ImmediateBinding: true,
		Clock: w.clock, Rand: func() float64 { return jitter },
	}
	for _, c := range configure {
		c(&cfg)
	}
	d, err := New(cfg)
	must(w.t, err)
	n.d = d
	return n
}

// cached is a claim as the sidecar's cache holds it: internal/shared/cachetrim drops
// kubectl's last-applied annotation.
func cached(claim *v1.PersistentVolumeClaim) *v1.PersistentVolumeClaim {
	c := claim.DeepCopy()
	delete(c.Annotations, lastApplied)
	return c
}

// serve is the API server: GET and UPDATE of claims, with optimistic
// concurrency on the resourceVersion as the real one.
func (w *world) serve(from string, action k8stesting.Action) (bool, runtime.Object, error) {
	if action.GetResource().Resource != "persistentvolumeclaims" {
		w.t.Errorf("%s: unexpected API call %s %s", from, action.GetVerb(), action.GetResource().Resource)
		return true, nil, fmt.Errorf("unexpected call")
	}
	switch action.GetVerb() {
	case "get":
		a := action.(k8stesting.GetAction)
		claim, barrier := w.get(from, a.GetNamespace(), a.GetName())
		if barrier != nil { // answer only once every racing node has read
			barrier.Done()
			barrier.Wait()
		}
		if claim == nil {
			return true, nil, apierrors.NewNotFound(v1.Resource("persistentvolumeclaims"), a.GetName())
		}
		return true, claim, nil
	case "update":
		w.mu.Lock()
		defer w.mu.Unlock()
		claim := action.(k8stesting.UpdateAction).GetObject().(*v1.PersistentVolumeClaim)
		key := claim.Namespace + "/" + claim.Name
		call := fmt.Sprintf("%s: update %s rv=%s selected-node=%s", from, key, claim.ResourceVersion, SelectedNode(claim))
		stored := w.claims[key]
		switch {
		case w.updateErr != nil:
			w.calls = append(w.calls, call+": "+string(apierrors.ReasonForError(w.updateErr)))
			return true, nil, w.updateErr
		case stored == nil || stored.ResourceVersion != claim.ResourceVersion:
			w.calls = append(w.calls, call+": Conflict")
			return true, nil, apierrors.NewConflict(v1.Resource("persistentvolumeclaims"), claim.Name, fmt.Errorf("the object has been modified"))
		}
		w.calls = append(w.calls, call+": ok")
		w.rv++
		updated := claim.DeepCopy()
		updated.ResourceVersion = strconv.Itoa(w.rv)
		w.claims[key] = updated
		for _, n := range w.nodes {
			must(w.t, n.claims.Update(cached(updated)))
		}
		return true, updated.DeepCopy(), nil
	}
	w.t.Errorf("%s: unexpected API call %s %s", from, action.GetVerb(), action.GetResource().Resource)
	return true, nil, fmt.Errorf("unexpected call")
}

// raceGets makes the next n GETs wait for each other, so that n nodes read
// the same resourceVersion before any of them writes.
func (w *world) raceGets(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.getBarrier = &sync.WaitGroup{}
	w.getBarrier.Add(n)
	w.barrierFor = n
}

// get reads a claim (nil if there is none) and takes a place at the
// barrier of raceGets if one is left.
func (w *world) get(from, namespace, name string) (*v1.PersistentVolumeClaim, *sync.WaitGroup) {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := namespace + "/" + name
	w.calls = append(w.calls, fmt.Sprintf("%s: get %s", from, key))
	var barrier *sync.WaitGroup
	if w.barrierFor > 0 {
		w.barrierFor--
		barrier = w.getBarrier
	}
	if stored, ok := w.claims[key]; ok {
		return stored.DeepCopy(), barrier
	}
	return nil, barrier
}

// reschedule is the controller library giving up on a node after a final
// error: it removes the selected node, and every node sees the claim
// unassigned again.
func (w *world) reschedule(namespace, name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	claim := w.claims[namespace+"/"+name]
	delete(claim.Annotations, AnnSelectedNode)
	w.rv++
	claim.ResourceVersion = strconv.Itoa(w.rv)
	for _, n := range w.nodes {
		must(w.t, n.claims.Update(cached(claim)))
	}
}

// informed is the claim as the nodes' informers deliver it now.
func (w *world) informed(namespace, name string) *v1.PersistentVolumeClaim {
	return cached(w.stored(namespace, name))
}

// stored returns the claim as the API server holds it.
func (w *world) stored(namespace, name string) *v1.PersistentVolumeClaim {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.claims[namespace+"/"+name].DeepCopy()
}

// apiCalls returns the API calls so far, sorted when sorted is set (for
// nodes acting concurrently).
func (w *world) apiCalls(sorted bool) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	calls := append([]string(nil), w.calls...)
	if sorted {
		sort.Strings(calls)
	}
	return calls
}

// setCached changes a claim in one node's cache only, as an informer event
// that reached that node.
func (n *node) setCached(t *testing.T, claim *v1.PersistentVolumeClaim) {
	t.Helper()
	must(t, n.claims.Update(claim))
}

type result struct {
	node  string
	owned bool
	err   error
}

// owns runs Owns in the background, as a controller worker would.
func (n *node) owns(ctx context.Context, claim *v1.PersistentVolumeClaim) <-chan result {
	done := make(chan result, 1)
	go func() {
		owned, err := n.d.Owns(ctx, claim, nil)
		done <- result{n.name, owned, err}
	}()
	return done
}

// Builders.

type claimOption func(*v1.PersistentVolumeClaim)

func newClaim(opts ...claimOption) *v1.PersistentVolumeClaim {
	class := "immediate"
	c := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "claim", UID: "uid-1",
			Annotations: map[string]string{lastApplied: `{"kind":"PersistentVolumeClaim"}`}},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &class},
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

func selectedNode(node string) claimOption {
	return func(c *v1.PersistentVolumeClaim) { c.Annotations[AnnSelectedNode] = node }
}

func inClass(name string) claimOption {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = &name }
}

func withUID(uid types.UID) claimOption {
	return func(c *v1.PersistentVolumeClaim) { c.UID = uid }
}

type classOption func(*storagev1.StorageClass)

func newClass(name string, mode storagev1.VolumeBindingMode, opts ...classOption) *storagev1.StorageClass {
	c := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "csi.example.com", VolumeBindingMode: &mode}
	for _, o := range opts {
		o(c)
	}
	return c
}

func allowedNodes(nodes ...string) classOption {
	return func(c *storagev1.StorageClass) {
		c.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: topologyKey, Values: nodes}}}}
	}
}

var (
	immediate = newClass("immediate", storagev1.VolumeBindingImmediate)
	late      = newClass("late", storagev1.VolumeBindingWaitForFirstConsumer)
)
