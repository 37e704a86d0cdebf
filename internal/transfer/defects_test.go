package transfer

// Tests of the fixes of issue 23's defects 7, 10, 14 and 16.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapfake "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/fake"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned/fake"
)

// boundClaimNamed is boundClaim with the claim named name.
func boundClaimNamed(name string) []runtime.Object {
	objs := boundClaim()
	objs[0].(*v1.PersistentVolumeClaim).Name = name
	objs[1].(*v1.PersistentVolume).Spec.ClaimRef.Name = name
	return objs
}

// TestClaimOfAnEphemeralVolumeOfARunningPodWaits (defect 7): a pod uses
// the claim <pod>-<volume> of its generic ephemeral volume without naming
// it; the transfer waits for it as for a pod that names its claim.
func TestClaimOfAnEphemeralVolumeOfARunningPodWaits(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app-0", Namespace: "prod"}, Status: v1.PodStatus{Phase: v1.PodRunning},
		Spec: v1.PodSpec{Volumes: []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
			VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{Spec: v1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("csi")}}}}}}}}
	h := newHarness(t, append(boundClaimNamed("app-0-scratch"), pod), nil)
	h.createRequestAndAccept(transferv1alpha1.KindPersistentVolumeClaim, "app-0-scratch", "")
	h.waitFor("the transfer to wait or end", func() bool {
		reason := h.transferredReason()
		return reason == plan.ReasonSourceInUse || reason == plan.ReasonCompleted || h.request() == nil
	})
	if reason := h.transferredReason(); reason != plan.ReasonSourceInUse {
		t.Errorf("Transferred reason = %q, want %s", reason, plan.ReasonSourceInUse)
	}
	if _, err := h.kube.CoreV1().PersistentVolumeClaims("prod").Get(h.ctx, "app-0-scratch", metav1.GetOptions{}); err != nil {
		t.Fatalf("The claim in use was deleted: %v", err)
	}
}

func TestPodsAreIndexedByTheClaimsTheyUse(t *testing.T) {
	tests := map[string]struct {
		volume v1.VolumeSource
		want   []string
	}{
		"a claim named":                    {v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}, []string{"prod/data"}},
		"the claim of an ephemeral volume": {v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}, []string{"prod/app-0-scratch"}},
		"no claim":                         {v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app-0", Namespace: "prod"},
				Spec: v1.PodSpec{Volumes: []v1.Volume{{Name: "scratch", VolumeSource: tc.volume}}}}
			got, err := podClaimIndex(pod)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("podClaimIndex = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestTargetClaimWithoutClassAsksForNone (defect 10): a recorded spec
// without storageClassName would get the target namespace's default class
// at admission, a class its volume does not have, and never bind; "" asks
// for a volume without class, as nil did in the source namespace.
func TestTargetClaimWithoutClassAsksForNone(t *testing.T) {
	tests := map[string]struct {
		recorded *string
		want     string
	}{
		"no class is asked for as none": {nil, ""},
		"none stays none":               {ptr.To(""), ""},
		"a class is kept":               {ptr.To("csi"), "csi"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := recordedRequest()
			r.Status.Record.ClaimSpec.StorageClassName = tc.recorded
			c := targetClaim(r)
			if c.Spec.StorageClassName == nil || *c.Spec.StorageClassName != tc.want {
				t.Errorf("storageClassName = %v, want %q", c.Spec.StorageClassName, tc.want)
			}
			if r.Status.Record.ClaimSpec.StorageClassName != tc.recorded {
				t.Error("building the claim changed the record")
			}
		})
	}
}

// byHand is a controller the test syncs itself, one sync at a time, its
// caches filled from the fake clientsets before each sync: no informer
// runs, so what a sync sees is what the test wrote.
type byHand struct {
	c       *Controller
	kube    *kubefake.Clientset
	snap    *snapfake.Clientset
	api     *fake.Clientset
	metrics *Metrics
	told    *toldEvents
}

// newByHand makes the controller; fails, when set, fails the first API
// write it reports true for (with the API server unreachable).
func newByHand(t *testing.T, kubeObjs, snapObjs, apiObjs []runtime.Object, fails func(clienttesting.Action) bool) *byHand {
	t.Helper()
	h := &byHand{kube: kubefake.NewClientset(kubeObjs...), snap: snapfake.NewSimpleClientset(snapObjs...), api: fake.NewSimpleClientset(apiObjs...), told: &toldEvents{}}
	failed := false
	fault := func(a clienttesting.Action) (bool, runtime.Object, error) {
		if fails != nil && !failed && fails(a) {
			failed = true
			return true, nil, errors.New("the API server is unreachable")
		}
		return false, nil, nil
	}
	h.kube.PrependReactor("*", "*", fault)
	h.api.PrependReactor("*", "*", fault)
	t.Cleanup(func() {
		if fails != nil && !failed {
			t.Error("The write meant to fail was never made")
		}
	})
	var err error
	if h.metrics, err = NewMetrics(prometheus.NewRegistry()); err != nil {
		t.Fatal(err)
	}
	if h.c, err = New(Config{Kube: h.kube, Snapshot: h.snap, API: h.api, Recorder: h.told, Metrics: h.metrics}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.c.queue.ShutDown)
	return h
}

// syncRequest fills the caches and syncs prod/request-name.
func (h *byHand) syncRequest(t *testing.T) error {
	t.Helper()
	h.fill(t)
	_, ctx := ktesting.NewTestContext(t)
	_, err := h.c.syncRequest(ctx, "prod/request-name")
	return err
}

// fill gives every cache what the fake clientsets hold.
func (h *byHand) fill(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	requests, err1 := h.api.TransferV1alpha1().StorageTransferRequests("").List(ctx, metav1.ListOptions{})
	accepts, err2 := h.api.TransferV1alpha1().StorageTransferAccepts("").List(ctx, metav1.ListOptions{})
	claims, err3 := h.kube.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	volumes, err4 := h.kube.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	snapshots, err5 := h.snap.SnapshotV1().VolumeSnapshots("").List(ctx, metav1.ListOptions{})
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		t.Fatal(err)
	}
	replace(t, h.c.requests, requests.Items)
	replace(t, h.c.accepts, accepts.Items)
	replace(t, h.c.claims, claims.Items)
	replace(t, h.c.volumes, volumes.Items)
	replace(t, h.c.snapshots, snapshots.Items)
}

func replace[T any](t *testing.T, inf cache.SharedIndexInformer, items []T) {
	t.Helper()
	objs := make([]any, 0, len(items))
	for i := range items {
		objs = append(objs, &items[i])
	}
	if err := inf.GetIndexer().Replace(objs, ""); err != nil {
		t.Fatal(err)
	}
}

// toldEvents records the events told, as "<namespace>/<name> <reason>".
type toldEvents struct {
	mu   sync.Mutex
	told []string
}

func (e *toldEvents) Event(obj runtime.Object, _, reason, _ string) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.told = append(e.told, m.GetNamespace()+"/"+m.GetName()+" "+reason)
}

func (e *toldEvents) Eventf(obj runtime.Object, typ, reason, format string, args ...any) {
	e.Event(obj, typ, reason, fmt.Sprintf(format, args...))
}

func (e *toldEvents) AnnotatedEventf(obj runtime.Object, _ map[string]string, typ, reason, format string, args ...any) {
	e.Event(obj, typ, reason, fmt.Sprintf(format, args...))
}

// count is how many events on namespace/name had reason.
func (e *toldEvents) count(object, reason string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, s := range e.told {
		if s == object+" "+reason {
			n++
		}
	}
	return n
}

// rollingBack is a claim transfer from prod/data to test/bar being rolled
// back before it locked the claim: its next sync ends it Failed.
func rollingBack() []runtime.Object {
	return []runtime.Object{
		&transferv1alpha1.StorageTransferRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "request-name", Namespace: "prod", UID: "r1", Finalizers: []string{plan.Finalizer}},
			Spec: transferv1alpha1.StorageTransferRequestSpec{Source: transferv1alpha1.TransferSource{Kind: transferv1alpha1.KindPersistentVolumeClaim, Name: "data"},
				AcceptName: "accept-name", TargetName: "bar", Token: testToken},
			Status: transferv1alpha1.StorageTransferRequestStatus{Phase: transferv1alpha1.PhaseTransferring, TargetNamespace: "test", AcceptUID: "a1",
				Record: &transferv1alpha1.TransferRecord{SourceUID: "c1", VolumeName: "pv-1", OriginalReclaimPolicy: v1.PersistentVolumeReclaimDelete,
					Step: string(plan.ActionStartRollback), RollingBack: true, RollbackReason: plan.ReasonSourceChanged, RollbackMessage: "the source changed"}},
		},
		&transferv1alpha1.StorageTransferAccept{ObjectMeta: metav1.ObjectMeta{Name: "accept-name", Namespace: "test", UID: "a1"},
			Spec: transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: "prod", RequestName: "request-name", RequestToken: testToken}},
	}
}

// TestAnEndedTransferIsCountedAndToldOnceThoughAWriteFails (defect 14):
// a write of finish that fails after the request's final status is
// written neither loses nor repeats the count and the accept's event.
func TestAnEndedTransferIsCountedAndToldOnceThoughAWriteFails(t *testing.T) {
	tests := map[string]func(clienttesting.Action) bool{
		"the request's finalizer is not removed at first": func(a clienttesting.Action) bool {
			u, ok := a.(clienttesting.UpdateAction)
			if !ok || u.GetSubresource() != "" {
				return false
			}
			r, ok := u.GetObject().(*transferv1alpha1.StorageTransferRequest)
			return ok && !slices.Contains(r.Finalizers, plan.Finalizer)
		},
		"the accept's final status is not written at first": func(a clienttesting.Action) bool {
			u, ok := a.(clienttesting.UpdateAction)
			if !ok {
				return false
			}
			acc, ok := u.GetObject().(*transferv1alpha1.StorageTransferAccept)
			return ok && acc.Status.Phase == transferv1alpha1.PhaseFailed
		},
	}
	for name, fails := range tests {
		t.Run(name, func(t *testing.T) {
			h := newByHand(t, boundClaim(), nil, rollingBack(), fails)
			var errs []error
			for range 4 {
				errs = append(errs, h.syncRequest(t))
			}
			if errs[0] == nil || errors.Join(errs[1:]...) != nil {
				t.Errorf("Syncs returned %v, want an error at first, then none", errs)
			}
			if n := testutil.ToFloat64(h.metrics.transfers.WithLabelValues(transferv1alpha1.KindPersistentVolumeClaim, string(transferv1alpha1.PhaseFailed))); n != 1 {
				t.Errorf("Transfers counted Failed: %v, want 1", n)
			}
			if n := h.told.count("test/accept-name", plan.ReasonSourceChanged); n != 1 {
				t.Errorf("Events %s on the accept: %d, want 1 (events: %v)", plan.ReasonSourceChanged, n, h.told.told)
			}
			r, err := h.api.TransferV1alpha1().StorageTransferRequests("prod").Get(t.Context(), "request-name", metav1.GetOptions{})
			if err != nil || r.Status.Phase != transferv1alpha1.PhaseFailed || slices.Contains(r.Finalizers, plan.Finalizer) {
				t.Errorf("Request = %+v, %v; want Failed, without finalizer", r, err)
			}
		})
	}
}

// lockedClaim is boundClaim, locked by the request of UID uid.
func lockedClaim(uid string) []runtime.Object {
	objs := boundClaim()
	claim := objs[0].(*v1.PersistentVolumeClaim)
	claim.Annotations = map[string]string{plan.LockAnnotation: uid}
	claim.Finalizers = []string{plan.Finalizer}
	return objs
}

// lockedSnapshot is readySnapshot, locked by the request of UID uid.
func lockedSnapshot(uid string) []runtime.Object {
	objs := readySnapshot()
	objs[0].(*snapv1.VolumeSnapshot).Annotations = map[string]string{plan.LockAnnotation: uid}
	return objs
}

// TestALockIsCollectedOnlyOnceItsRequestIsGone (defect 16): a request
// deleted while it locked its source (its finalizer removed by hand)
// leaves the lock behind; it is removed once no request of its UID exists,
// as the API server says, not only the cache.
func TestALockIsCollectedOnlyOnceItsRequestIsGone(t *testing.T) {
	request := &transferv1alpha1.StorageTransferRequest{ObjectMeta: metav1.ObjectMeta{Name: "earlier", Namespace: "prod", UID: "r0"},
		Spec:   transferv1alpha1.StorageTransferRequestSpec{Token: testToken},
		Status: transferv1alpha1.StorageTransferRequestStatus{Phase: transferv1alpha1.PhaseFailed}}
	tests := map[string]struct {
		inCache, inAPI bool
		collected      bool
	}{
		"the lock of a deleted request is collected":               {collected: true},
		"the lock of a request the cache has not seen yet is kept": {inAPI: true},
		"the lock of a request that exists is kept":                {inCache: true, inAPI: true},
	}
	for name, tc := range tests {
		for _, kind := range []string{transferv1alpha1.KindPersistentVolumeClaim, transferv1alpha1.KindVolumeSnapshot} {
			t.Run(name+", on a "+kind, func(t *testing.T) {
				var kubeObjs, snapObjs, apiObjs []runtime.Object
				if kind == transferv1alpha1.KindPersistentVolumeClaim {
					kubeObjs = lockedClaim("r0")
				} else {
					snapObjs = lockedSnapshot("r0")
				}
				if tc.inAPI {
					r := request.DeepCopy()
					r.Spec.Source = transferv1alpha1.TransferSource{Kind: kind, Name: "data"}
					apiObjs = append(apiObjs, r)
				}
				h := newByHand(t, kubeObjs, snapObjs, apiObjs, nil)
				h.fill(t)
				if !tc.inCache {
					if err := h.c.requests.GetIndexer().Replace(nil, ""); err != nil {
						t.Fatal(err)
					}
				}
				var locked metav1.Object
				if kind == transferv1alpha1.KindPersistentVolumeClaim {
					locked = getAs[*v1.PersistentVolumeClaim](h.c.claims, "prod/data")
					h.c.enqueueAll(h.c.claimKeys).OnAdd(locked, true)
				} else {
					locked = getAs[*snapv1.VolumeSnapshot](h.c.snapshots, "prod/foo")
					h.c.enqueueAll(h.c.snapshotKeys).OnAdd(locked, true)
				}
				_, ctx := ktesting.NewTestContext(t)
				for h.c.queue.Len() > 0 {
					h.c.processNext(ctx)
				}

				var now metav1.Object
				if kind == transferv1alpha1.KindPersistentVolumeClaim {
					now, _ = h.kube.CoreV1().PersistentVolumeClaims("prod").Get(ctx, "data", metav1.GetOptions{})
				} else {
					now, _ = h.snap.SnapshotV1().VolumeSnapshots("prod").Get(ctx, "foo", metav1.GetOptions{})
				}
				_, lockKept := now.GetAnnotations()[plan.LockAnnotation]
				finalizerKept := slices.Contains(now.GetFinalizers(), plan.Finalizer)
				told := h.told.count("prod/"+locked.GetName(), ReasonLockCollected)
				if tc.collected && (lockKept || finalizerKept || told != 1) {
					t.Errorf("Lock kept %v, finalizer kept %v, %s told %d times; want the lock and finalizer removed, told once", lockKept, finalizerKept, ReasonLockCollected, told)
				}
				if !tc.collected && (!lockKept || finalizerKept != slices.Contains(locked.GetFinalizers(), plan.Finalizer) || told != 0) {
					t.Errorf("Lock kept %v, finalizer kept %v, %s told %d times; want both as they were, nothing told", lockKept, finalizerKept, ReasonLockCollected, told)
				}
			})
		}
	}
}

// TestATransferTakesASourceWhoseLockerIsGone (defect 16): a source left
// locked by a request deleted by hand is taken by the next request, not
// left waiting with SourceLockedByAnotherTransfer.
func TestATransferTakesASourceWhoseLockerIsGone(t *testing.T) {
	h := newHarness(t, lockedClaim("r0"), nil)
	h.createRequestAndAccept(transferv1alpha1.KindPersistentVolumeClaim, "data", "")
	if err := wait.PollUntilContextTimeout(h.ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		r := h.request()
		return r == nil || r.Status.Record != nil, nil
	}); err != nil {
		t.Fatalf("The transfer did not begin: %v; Transferred reason %q", err, h.transferredReason())
	}
	if !slices.ContainsFunc(h.eventsSoFar(), func(e string) bool { return strings.HasPrefix(e, v1.EventTypeNormal+" "+ReasonLockCollected+" ") }) {
		t.Errorf("No %s event", ReasonLockCollected)
	}
}
