package transfer

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapfake "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/fake"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned/fake"
)

// pvcProtection is kube-controller-manager's finalizer on claims.
const pvcProtection = "kubernetes.io/pvc-protection"

// testToken is what the controller under test sets as token.
const testToken = "dGVzdC10b2tlbi0xMjM0NTY3"

// harness runs the controller against fake clientsets, with a loop that
// plays the snapshot controller and the PV binder: a target snapshot bound
// to an existing content becomes ready, a claim naming a volume reserved
// for it is bound.
type harness struct {
	t      *testing.T
	ctx    context.Context
	kube   *kubefake.Clientset
	snap   *snapfake.Clientset
	api    *fake.Clientset
	events *record.FakeRecorder
	c      *Controller
	// stop stops c.
	stop func()
	// fault, when set, fails the API calls it returns an error for.
	fault atomic.Pointer[func(clienttesting.Action) error]
	// rv numbers the requests' resourceVersions.
	rv atomic.Int64
}

func newHarness(t *testing.T, kubeObjs, snapObjs []runtime.Object) *harness {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	h := &harness{t: t, ctx: ctx, kube: kubefake.NewClientset(kubeObjs...), snap: snapfake.NewSimpleClientset(snapObjs...),
		api: fake.NewSimpleClientset(), events: record.NewFakeRecorder(1000)}
	// Reactors are installed before anything uses the clientsets: adding
	// one later races with the calls.
	injectFault := func(a clienttesting.Action) (bool, runtime.Object, error) {
		if f := h.fault.Load(); f != nil {
			if err := (*f)(a); err != nil {
				return true, nil, err
			}
		}
		return false, nil, nil
	}
	h.kube.PrependReactor("*", "*", injectFault)
	h.snap.PrependReactor("*", "*", injectFault)
	// The API server gives every object it creates a UID.
	setUID := func(a clienttesting.Action) (bool, runtime.Object, error) {
		if m, err := meta.Accessor(a.(clienttesting.CreateAction).GetObject()); err == nil && m.GetUID() == "" {
			m.SetUID(uuid.NewUUID())
		}
		return false, nil, nil
	}
	h.kube.PrependReactor("create", "*", setUID)
	h.snap.PrependReactor("create", "*", setUID)
	h.kube.PrependReactor("delete", "persistentvolumeclaims", h.deleteHeldClaim)
	h.kube.PrependReactor("update", "persistentvolumeclaims", h.removeReleasedClaim)
	h.api.PrependReactor("create", "storagetransferrequests", setUID)
	h.api.PrependReactor("update", "storagetransferrequests", h.updateIfCurrent)
	var wg sync.WaitGroup
	h.c, h.stop = h.startController()
	wg.Go(h.playControllers)
	t.Cleanup(func() { cancel(); wg.Wait() })
	return h
}

// admit is the target namespace's admission of a VolumeSnapshot, as a dry
// run of its creation: refused by the faults, or because it exists;
// nothing is created.
func (h *harness) admit(_ context.Context, s *snapv1.VolumeSnapshot) error {
	if f := h.fault.Load(); f != nil {
		if err := (*f)(dryRunCreate(s)); err != nil {
			return err
		}
	}
	if _, err := h.snap.Tracker().Get(snapv1.SchemeGroupVersion.WithResource("volumesnapshots"), s.Namespace, s.Name); err == nil {
		return apierrors.NewAlreadyExists(snapv1.Resource("volumesnapshots"), s.Name)
	}
	return nil
}

// unstarted is a controller on fake clientsets holding objs (kube,
// snapshot and transfer objects alike), whose caches a test fills itself:
// it is never started.
func unstarted(t *testing.T, recorder record.EventRecorder, objs ...runtime.Object) *Controller {
	t.Helper()
	var kube, snaps, api []runtime.Object
	for _, obj := range objs {
		switch obj.(type) {
		case *snapv1.VolumeSnapshot, *snapv1.VolumeSnapshotContent:
			snaps = append(snaps, obj)
		case *transferv1alpha1.StorageTransferRequest, *transferv1alpha1.StorageTransferAccept:
			api = append(api, obj)
		default:
			kube = append(kube, obj)
		}
	}
	c, err := New(Config{Kube: kubefake.NewClientset(kube...), Snapshot: snapfake.NewSimpleClientset(snaps...), API: fake.NewSimpleClientset(api...), Recorder: recorder})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// deleteHeldClaim deletes a claim as the API server does: one held by a
// finalizer is only marked deleted.
func (h *harness) deleteHeldClaim(a clienttesting.Action) (bool, runtime.Object, error) {
	d := a.(clienttesting.DeleteAction)
	obj, err := h.kube.Tracker().Get(d.GetResource(), d.GetNamespace(), d.GetName())
	if err != nil {
		return false, nil, nil
	}
	pvc := obj.(*v1.PersistentVolumeClaim).DeepCopy()
	if len(pvc.Finalizers) == 0 {
		return false, nil, nil
	}
	if pvc.DeletionTimestamp == nil {
		now := metav1.Now()
		pvc.DeletionTimestamp = &now
		if err := h.kube.Tracker().Update(d.GetResource(), pvc, pvc.Namespace); err != nil {
			return true, nil, err
		}
	}
	return true, nil, nil
}

// letDeletedClaimGo plays pvc-protection (the claim's pods are not
// modeled once it is deleted).
func (h *harness) letDeletedClaimGo(ctx context.Context, pvc *v1.PersistentVolumeClaim) {
	if i := slices.Index(pvc.Finalizers, pvcProtection); i >= 0 {
		pvc.Finalizers = slices.Delete(pvc.Finalizers, i, i+1)
		_, _ = h.kube.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{})
	}
}

// removeReleasedClaim removes, as the API server does, a deleted claim
// whose last finalizer an update removes.
func (h *harness) removeReleasedClaim(a clienttesting.Action) (bool, runtime.Object, error) {
	u := a.(clienttesting.UpdateAction)
	pvc, ok := u.GetObject().(*v1.PersistentVolumeClaim)
	if !ok || pvc.DeletionTimestamp == nil || len(pvc.Finalizers) > 0 || u.GetSubresource() != "" {
		return false, nil, nil
	}
	return true, pvc, h.kube.Tracker().Delete(u.GetResource(), pvc.Namespace, pvc.Name)
}

// updateIfCurrent refuses, as the API server does, an update of a request
// from a resourceVersion that is not the current one: the controller's
// write-ahead record is fenced by it.
func (h *harness) updateIfCurrent(a clienttesting.Action) (bool, runtime.Object, error) {
	u := a.(clienttesting.UpdateAction)
	r := u.GetObject().(*transferv1alpha1.StorageTransferRequest)
	cur, err := h.api.Tracker().Get(u.GetResource(), u.GetNamespace(), r.Name)
	if err != nil {
		return false, nil, nil
	}
	if current := cur.(*transferv1alpha1.StorageTransferRequest).ResourceVersion; r.ResourceVersion != current {
		return true, nil, apierrors.NewConflict(u.GetResource().GroupResource(), r.Name, fmt.Errorf("resourceVersion %q is not %q", r.ResourceVersion, current))
	}
	r.ResourceVersion = strconv.FormatInt(h.rv.Add(1), 10)
	return false, nil, nil
}

// startController runs another controller (a replica) on the harness's
// clientsets until the returned stop is called or the test ends; stop
// returns once it has stopped.
func (h *harness) startController() (c *Controller, stop func()) {
	h.t.Helper()
	c, err := New(Config{Kube: h.kube, Snapshot: h.snap, API: h.api, Recorder: h.events, Admit: h.admit,
		Token: func() (string, error) { return testToken, nil }})
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx, 2) }()
	stop = func() { cancel(); <-done }
	h.t.Cleanup(stop)
	return c, stop
}

// playControllers is the snapshot controller and PV binder of the test.
func (h *harness) playControllers() {
	_ = wait.PollUntilContextCancel(h.ctx, 10*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		snaps, _ := h.snap.SnapshotV1().VolumeSnapshots("").List(ctx, metav1.ListOptions{})
		for _, s := range snaps.Items {
			if s.Status == nil && s.Spec.Source.VolumeSnapshotContentName != nil {
				if _, err := h.snap.SnapshotV1().VolumeSnapshotContents().Get(ctx, *s.Spec.Source.VolumeSnapshotContentName, metav1.GetOptions{}); err == nil {
					s.Status = &snapv1.VolumeSnapshotStatus{ReadyToUse: ptr.To(true), BoundVolumeSnapshotContentName: s.Spec.Source.VolumeSnapshotContentName}
					_, _ = h.snap.SnapshotV1().VolumeSnapshots(s.Namespace).UpdateStatus(ctx, &s, metav1.UpdateOptions{})
				}
			}
		}
		volumes, _ := h.kube.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
		for _, pv := range volumes.Items {
			if pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.UID == "" && pv.Status.Phase != v1.VolumeAvailable {
				pv.Status.Phase = v1.VolumeAvailable // pre-bound
				_, _ = h.kube.CoreV1().PersistentVolumes().UpdateStatus(ctx, &pv, metav1.UpdateOptions{})
			}
		}
		claims, _ := h.kube.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
		for _, pvc := range claims.Items {
			if pvc.DeletionTimestamp != nil {
				h.letDeletedClaimGo(ctx, &pvc)
				continue
			}
			if pvc.Status.Phase == v1.ClaimBound || pvc.Spec.VolumeName == "" {
				continue
			}
			pv, err := h.kube.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
			if err != nil || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Namespace != pvc.Namespace || pv.Spec.ClaimRef.Name != pvc.Name {
				continue
			}
			pv.Spec.ClaimRef.UID = pvc.UID
			if _, err := h.kube.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err == nil {
				pvc.Status.Phase = v1.ClaimBound
				_, _ = h.kube.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(ctx, &pvc, metav1.UpdateOptions{})
			}
		}
		return false, nil
	})
}

// createRequest creates the seed's request for kind/name and, once the
// controller has set its token, the accept in test quoting token (the
// request's own when empty).
func (h *harness) createRequestAndAccept(kind, name, token string) {
	h.t.Helper()
	r := &transferv1alpha1.StorageTransferRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "request-name", Namespace: "prod", UID: "r1"},
		Spec: transferv1alpha1.StorageTransferRequestSpec{Source: transferv1alpha1.TransferSource{Kind: kind, Name: name},
			AcceptName: "accept-name", TargetName: "bar"},
	}
	if _, err := h.api.TransferV1alpha1().StorageTransferRequests("prod").Create(h.ctx, r, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
	var got string
	h.waitFor("the token", func() bool {
		r, err := h.api.TransferV1alpha1().StorageTransferRequests("prod").Get(h.ctx, "request-name", metav1.GetOptions{})
		got = r.Spec.Token
		return err == nil && got != ""
	})
	if token == "" {
		token = got
	}
	a := &transferv1alpha1.StorageTransferAccept{ObjectMeta: metav1.ObjectMeta{Name: "accept-name", Namespace: "test", UID: "a1"},
		Spec: transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: "prod", RequestName: "request-name", RequestToken: token}}
	if _, err := h.api.TransferV1alpha1().StorageTransferAccepts("test").Create(h.ctx, a, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	if err := wait.PollUntilContextCancel(h.ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		h.t.Fatalf("Waiting for %s: %v", what, err)
	}
}

// request returns the request, nil once it is gone.
func (h *harness) request() *transferv1alpha1.StorageTransferRequest {
	r, err := h.api.TransferV1alpha1().StorageTransferRequests("prod").Get(h.ctx, "request-name", metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return r
}

// transferredCondition returns the request's Transferred condition reason.
func (h *harness) transferredReason() string {
	r := h.request()
	if r == nil {
		return ""
	}
	for _, c := range r.Status.Conditions {
		if c.Type == transferv1alpha1.ConditionTransferred {
			return c.Reason
		}
	}
	return ""
}

// eventsSoFar drains the recorded events.
func (h *harness) eventsSoFar() []string {
	var out []string
	for {
		select {
		case e := <-h.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func checkNoEventQuotesTheToken(t *testing.T, events []string) {
	t.Helper()
	for _, e := range events {
		if strings.Contains(e, testToken) {
			t.Errorf("An event quotes the token: %q", e)
		}
	}
}

// gathered is c.gather(r), failing t on an error.
func gathered(t *testing.T, c *Controller, r *transferv1alpha1.StorageTransferRequest) *plan.Observed {
	t.Helper()
	o, err := c.gather(t.Context(), r)
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	return o
}
