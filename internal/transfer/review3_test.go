package transfer

// Third adversarial review: the token kept in a Secret (7945fdf) seen by a
// tenant of another namespace, and by bad timing. Each TestReview3... test
// fails on the controller as written, unless its comment says SAFE: those
// document a hypothesis checked and found to hold.

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2/ktesting"

	"github.com/xns-csi/csi-provisioner/internal/transfer/match"
	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// otherToken is a well-formed token that is not the request's.
const otherToken = "b3RoZXItdG9rZW4tOTg3NjU0"

var secretsResource = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// r3Request is the claim request prod/request-name (prod/data to
// test/bar, accept test/accept-name), its token in spec.token or, with
// secretRef, in the Secret prod/transfer-token.
func r3Request(secretRef bool) *transferv1alpha1.StorageTransferRequest {
	r := &transferv1alpha1.StorageTransferRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "request-name", Namespace: "prod", UID: "r1"},
		Spec: transferv1alpha1.StorageTransferRequestSpec{Source: transferv1alpha1.TransferSource{Kind: transferv1alpha1.KindPersistentVolumeClaim, Name: "data"},
			AcceptName: "accept-name", TargetName: "bar", Token: testToken},
	}
	if secretRef {
		r.Spec.Token = ""
		r.Spec.TokenSecretRef = &transferv1alpha1.TokenSecretReference{Name: "transfer-token"}
	}
	return r
}

// r3Accept is the accept name in namespace ns (UID "a-"+ns+"-"+name)
// naming prod/request-name, quoting the token or, with secretRef, naming
// the Secret ns/transfer-token.
func r3Accept(ns, name string, secretRef bool) *transferv1alpha1.StorageTransferAccept {
	a := &transferv1alpha1.StorageTransferAccept{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("a-" + ns + "-" + name)},
		Spec: transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: "prod", RequestName: "request-name", RequestToken: testToken}}
	if secretRef {
		a.Spec.RequestToken = ""
		a.Spec.RequestTokenSecretRef = &transferv1alpha1.TokenSecretReference{Name: "transfer-token"}
	}
	return a
}

// forbidSecrets makes every read of a Secret of namespace ns Forbidden,
// as when the controller's RoleBinding there is missing or removed.
func forbidSecrets(h *byHand, ns string) {
	h.kube.PrependReactor("get", "secrets", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() == ns {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "transfer-token", fmt.Errorf("no RoleBinding"))
		}
		return false, nil, nil
	})
}

// acceptOf returns the accept ns/name as the API server has it, nil if
// it is gone.
func (h *byHand) acceptOf(t *testing.T, ns, name string) *transferv1alpha1.StorageTransferAccept {
	t.Helper()
	a, err := h.api.TransferV1alpha1().StorageTransferAccepts(ns).Get(t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// matchedOf is the Matched condition of accept a, "<none>" without one.
func matchedOf(a *transferv1alpha1.StorageTransferAccept) string {
	if a == nil {
		return "<gone>"
	}
	c := meta.FindStatusCondition(a.Status.Conditions, transferv1alpha1.ConditionMatched)
	if c == nil {
		return "<none>"
	}
	return string(a.Status.Phase) + " " + string(c.Status) + " " + c.Reason + ": " + c.Message
}

// fullEvents records every event told as "<namespace>/<name> <reason>:
// <message>".
type fullEvents struct {
	mu   sync.Mutex
	told []string
}

func (e *fullEvents) Event(obj runtime.Object, _, reason, message string) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.told = append(e.told, m.GetNamespace()+"/"+m.GetName()+" "+reason+": "+message)
}

func (e *fullEvents) Eventf(obj runtime.Object, typ, reason, format string, args ...any) {
	e.Event(obj, typ, reason, fmt.Sprintf(format, args...))
}

func (e *fullEvents) AnnotatedEventf(obj runtime.Object, _ map[string]string, typ, reason, format string, args ...any) {
	e.Event(obj, typ, reason, fmt.Sprintf(format, args...))
}

// on is the events told on the object ns/name.
func (e *fullEvents) on(ns, name string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, s := range e.told {
		if strings.HasPrefix(s, ns+"/"+name+" ") {
			out = append(out, s)
		}
	}
	return out
}

// timedQueue is the controller's queue with the delays it is asked for
// kept by the test: "time passes" when the test re-adds the keys whose
// delay has run out. Nothing else adds a key later.
type timedQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	after map[string]time.Duration
}

func (q *timedQueue) AddAfter(key string, d time.Duration) { q.after[key] = d }

func (q *timedQueue) AddRateLimited(key string) { q.after[key] = time.Millisecond }

// pass lets d pass: every key due within d is queued.
func (q *timedQueue) pass(d time.Duration) {
	for k, due := range q.after {
		if due <= d {
			q.Add(k)
			delete(q.after, k)
		}
	}
}

// drain works on the queue until it is empty, the caches filled from the
// fake clientsets before each key.
func (h *byHand) drain(t *testing.T, q *timedQueue) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	for n := 0; q.Len() > 0; n++ {
		if n > 100 {
			t.Fatal("The queue never empties")
		}
		h.fill(t)
		h.c.processNext(ctx)
	}
}

// REVIEW3 FINDING A (oracle by timing). Secrets are not watched: a change
// of an accept's Secret is seen at the next look. When the request the
// accept names exists and waits, that look comes within 30 s (the
// request's waitInterval requeue reads every accept's Secret); when it
// does not exist, nothing looks again until the accept itself changes or
// the informers resync (15 min by default). So a tenant of any namespace
// creates an accept naming prod/<guess> and a Secret that is missing,
// then creates the Secret with any well-formed token: its verdict turns
// from TokenSecretNotFound to RequestNotFound within 30 s if and only if
// the request exists (and waits). The "told alike" promise of
// docs/transfer.md ("an accept is no way to learn of requests in other
// namespaces") holds at one look but not over time.
func TestReview3AnAcceptsSecretChangeIsSeenAlikeWhetherOrNotItsRequestExists(t *testing.T) {
	told := map[bool]string{}
	for _, requestExists := range []bool{true, false} {
		apiObjs := []runtime.Object{r3Accept("mallory", "probe", true)}
		if requestExists {
			apiObjs = append(apiObjs, r3Request(false))
		}
		h := newByHand(t, nil, nil, apiObjs, nil)
		q := &timedQueue{TypedRateLimitingInterface: h.c.queue, after: map[string]time.Duration{}}
		h.c.queue = q
		h.fill(t)
		// The informers' add events, then the event of the accept's
		// status write.
		for _, obj := range apiObjs {
			for _, k := range append(h.c.requestKeys(obj), h.c.acceptKeys(obj)...) {
				q.Add(k)
			}
		}
		h.drain(t, q)
		for _, k := range h.c.acceptKeys(apiObjs[0]) {
			q.Add(k)
		}
		h.drain(t, q)
		if got := h.acceptOf(t, "mallory", "probe"); !strings.Contains(matchedOf(got), match.ReasonTokenSecretNotFound) {
			t.Fatalf("Setup (request exists: %v): accept %s, want %s", requestExists, matchedOf(got), match.ReasonTokenSecretNotFound)
		}
		// The prober creates its Secret, with a token of its own.
		if _, err := h.kube.CoreV1().Secrets("mallory").Create(t.Context(), tokenSecret("mallory", otherToken), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		q.pass(waitInterval + time.Second)
		h.drain(t, q)
		told[requestExists] = matchedOf(h.acceptOf(t, "mallory", "probe"))
	}
	if told[true] != told[false] {
		t.Errorf("31 s after the prober created its Secret, its accept says\n  %s\nwhen prod/request-name exists, and\n  %s\nwhen it does not: the request's existence leaks", told[true], told[false])
	}
}

// maxMessage is the CRDs' maxLength of a condition's message.
const maxMessage = 32768

// validateAcceptStatus refuses, as the API server does by the CRD's
// schema, an accept status whose condition message is longer than
// maxMessage.
func validateAcceptStatus(a clienttesting.Action) (bool, runtime.Object, error) {
	u, ok := a.(clienttesting.UpdateAction)
	if !ok {
		return false, nil, nil
	}
	acc, ok := u.GetObject().(*transferv1alpha1.StorageTransferAccept)
	if !ok {
		return false, nil, nil
	}
	for i, c := range acc.Status.Conditions {
		if len(c.Message) > maxMessage {
			return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: transferv1alpha1.GroupName, Kind: "StorageTransferAccept"}, acc.Name,
				field.ErrorList{field.TooLong(field.NewPath("status", "conditions").Index(i).Child("message"), "", maxMessage)})
		}
	}
	return false, nil, nil
}

// REVIEW3 FINDING B (cross-namespace denial of service). A Secret's type
// is not validated by the API server (any string, up to the object size
// limit), and TokenSecretInvalid quotes it in the accept's Matched
// message. A tenant of any namespace that binds the role creates an
// accept naming someone else's request, and a Secret whose type is 40 KiB
// long: the accept's status write is refused (the CRD's maxLength 32768),
// tellAccepts returns the error, and the victim's sync fails after
// writing its record and before taking its step, at every sync: the
// transfer never moves (before or after its point of no return).
func TestReview3AnAcceptWithAHugeSecretTypeDoesNotStallAnotherNamespacesTransfer(t *testing.T) {
	huge := tokenSecret("mallory", otherToken)
	huge.Type = v1.SecretType(strings.Repeat("x", 40000))
	h := newByHand(t, append(boundClaim(), huge), nil,
		[]runtime.Object{r3Request(false), r3Accept("test", "accept-name", false), r3Accept("mallory", "probe", true)}, nil)
	h.api.PrependReactor("update", "storagetransferaccepts", validateAcceptStatus)
	var errs []error
	for range 8 {
		if err := h.syncRequest(t); err != nil {
			errs = append(errs, err)
		}
	}
	claim, err := h.kube.CoreV1().PersistentVolumeClaims("prod").Get(t.Context(), "data", metav1.GetOptions{})
	if err == nil && claim.Annotations[plan.LockAnnotation] != "r1" {
		r, _ := h.api.TransferV1alpha1().StorageTransferRequests("prod").Get(t.Context(), "request-name", metav1.GetOptions{})
		t.Errorf("After 8 syncs the transfer of prod/data to test/bar has not locked its source (record %+v); the syncs failed with %d errors, the last %v",
			r.Status.Record, len(errs), errs[len(errs)-1])
	}
	for _, s := range h.told.told {
		if strings.Contains(s, "xxxxxxxxxxxxxxxx") {
			t.Errorf("An event quotes the Secret's type: %.100s...", s)
		}
	}
}

// REVIEW3 FINDING C (the target holds the source hostage). Once a
// transfer has begun, a refused read of its accept's Secret fails the
// whole sync ("the transfer waits"), whatever the plan would do without
// the token. So the target's owner removes its RoleBinding, and the
// source's owner can no longer withdraw: the deleted request is never
// rolled back, its claim stays locked (annotation, finalizer) and the
// request hangs on its finalizer. A request's deletion withdraws
// regardless of the accept's token: the plan needs no accept for it.
func TestReview3AnUnreadableAcceptSecretDoesNotBlockTheRequestsWithdrawal(t *testing.T) {
	r := r3Request(false)
	now := metav1.Now()
	r.DeletionTimestamp, r.Finalizers = &now, []string{plan.Finalizer}
	claimSpec := boundClaim()[0].(*v1.PersistentVolumeClaim).Spec
	r.Status = transferv1alpha1.StorageTransferRequestStatus{Phase: transferv1alpha1.PhaseTransferring, TargetNamespace: "test", AcceptUID: "a-test-accept-name",
		Record: &transferv1alpha1.TransferRecord{Step: string(plan.ActionLockSource), SourceUID: "c1", VolumeName: "pv-1",
			OriginalReclaimPolicy: v1.PersistentVolumeReclaimDelete, ClaimSpec: &claimSpec}}
	h := newByHand(t, append(lockedClaim("r1"), tokenSecret("test", testToken)), nil, []runtime.Object{r, r3Accept("test", "accept-name", true)}, nil)
	forbidSecrets(h, "test")
	var last error
	for range 6 {
		last = h.syncRequest(t)
	}
	claim, err := h.kube.CoreV1().PersistentVolumeClaims("prod").Get(t.Context(), "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if claim.Annotations[plan.LockAnnotation] != "" || len(claim.Finalizers) > 0 {
		t.Errorf("The source's owner deleted the request before the point of no return, the target's owner removed its RoleBinding: after 6 syncs the claim is still locked (%v, %v), the last sync: %v",
			claim.Annotations, claim.Finalizers, last)
	}
}

// completedRequestAndAccept is a claim transfer that completed an hour
// ago, both tokens in Secrets, its accept told Completed.
func completedRequestAndAccept() (*transferv1alpha1.StorageTransferRequest, *transferv1alpha1.StorageTransferAccept) {
	r := r3Request(true)
	done := metav1.NewTime(time.Now().Add(-time.Hour))
	cond := metav1.Condition{Type: transferv1alpha1.ConditionTransferred, Status: metav1.ConditionTrue, Reason: plan.ReasonCompleted, Message: "done", LastTransitionTime: done}
	matched := metav1.Condition{Type: transferv1alpha1.ConditionMatched, Status: metav1.ConditionTrue, Reason: match.ReasonMatched, Message: "matches", LastTransitionTime: done}
	r.Status = transferv1alpha1.StorageTransferRequestStatus{Phase: transferv1alpha1.PhaseCompleted, TargetNamespace: "test", AcceptUID: "a-test-accept-name",
		CompletionTime: &done, Conditions: []metav1.Condition{matched, cond},
		Record: &transferv1alpha1.TransferRecord{Step: string(plan.ActionReleaseSource), SourceUID: "c1", VolumeName: "pv-1", PointOfNoReturn: true, HandedOver: true,
			OriginalReclaimPolicy: v1.PersistentVolumeReclaimDelete}}
	a := r3Accept("test", "accept-name", true)
	a.Status = transferv1alpha1.StorageTransferAcceptStatus{Phase: transferv1alpha1.PhaseCompleted, Conditions: []metav1.Condition{matched, cond}}
	return r, a
}

// REVIEW3 FINDING D (cleanup after completion). A token Secret is not
// needed once the transfer completed, and removing it (or the
// RoleBinding) is the natural cleanup. But every look at the completed
// request still reads both Secrets and decides the match again: the
// completed accept is rewritten Pending with TokenSecretNotFound or
// RequestNotFound (its Transferred condition dropped), retire deletes the
// request but not the accept (no match: nil), which is left for good; a
// Forbidden read (begun) fails every sync, and neither is retired.
func TestReview3TokenSecretsRemovedAfterCompletionLeaveTheTransferCompletedAndRetired(t *testing.T) {
	for name, tc := range map[string]struct {
		secrets []runtime.Object
		forbid  string
	}{
		"the accept's Secret deleted":              {secrets: []runtime.Object{tokenSecret("prod", testToken)}},
		"the request's Secret deleted":             {secrets: []runtime.Object{tokenSecret("test", testToken)}},
		"the accept's RoleBinding removed":         {secrets: []runtime.Object{tokenSecret("prod", testToken), tokenSecret("test", testToken)}, forbid: "test"},
		"the request's RoleBinding removed":        {secrets: []runtime.Object{tokenSecret("prod", testToken), tokenSecret("test", testToken)}, forbid: "prod"},
		"SAFE (control): both Secrets still there": {secrets: []runtime.Object{tokenSecret("prod", testToken), tokenSecret("test", testToken)}},
	} {
		t.Run(name, func(t *testing.T) {
			r, a := completedRequestAndAccept()
			h := newByHand(t, tc.secrets, nil, []runtime.Object{r, a}, nil)
			if tc.forbid != "" {
				forbidSecrets(h, tc.forbid)
			}
			err := h.syncRequest(t)
			for _, act := range h.api.Actions() {
				if u, ok := act.(clienttesting.UpdateAction); ok && u.GetSubresource() == "status" {
					if acc, ok := u.GetObject().(*transferv1alpha1.StorageTransferAccept); ok && acc.Status.Phase != transferv1alpha1.PhaseCompleted {
						t.Errorf("The completed accept was rewritten: %s", matchedOf(acc))
					}
				}
			}
			if got := h.acceptOf(t, "test", "accept-name"); got != nil {
				t.Errorf("After the retention the accept is still there (%s); the sync: %v", matchedOf(got), err)
			}
			if _, gerr := h.api.TransferV1alpha1().StorageTransferRequests("prod").Get(t.Context(), "request-name", metav1.GetOptions{}); gerr == nil {
				t.Errorf("After the retention the request is still there; the sync: %v", err)
			}
		})
	}
}

// pastPointOfNoReturn is a claim transfer whose source prod/data was
// deleted (held by the transfer's finalizer), its volume Retain and still
// bound to it, the target claim test/bar made: the next step binds the
// volume to the target. The request's token is in the Secret
// prod/transfer-token.
func pastPointOfNoReturn() []runtime.Object {
	r := r3Request(true)
	r.Finalizers = []string{plan.Finalizer}
	objs := lockedClaim("r1")
	src, pv := objs[0].(*v1.PersistentVolumeClaim), objs[1].(*v1.PersistentVolume)
	now := metav1.Now()
	src.DeletionTimestamp = &now
	pv.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimRetain
	r.Status = transferv1alpha1.StorageTransferRequestStatus{Phase: transferv1alpha1.PhaseTransferring, TargetNamespace: "test", AcceptUID: "a-test-accept-name",
		Record: &transferv1alpha1.TransferRecord{Step: string(plan.ActionDeleteSource), SourceUID: "c1", VolumeName: "pv-1", PointOfNoReturn: true,
			OriginalReclaimPolicy: v1.PersistentVolumeReclaimDelete, ClaimSpec: src.Spec.DeepCopy()}}
	target := targetClaim(r)
	target.UID = "t1"
	return append(objs, target, r, r3Accept("test", "accept-name", false))
}

// REVIEW3 FINDING E. docs/transfer.md: "deleting the Secret or changing
// its token withdraws the offer ... as deleting the request ... does,
// with the same outcome before and after the point of no return".
// Deleting the request after the point of no return does not stop the
// hand-over (the request's deletion is not looked at past it); deleting
// its Secret does: no accept matches, and the object is given back, the
// target told "the StorageTransferAccept was deleted". The source's owner
// thus keeps a veto past the point of no return, which the target was
// told it no longer has, and the reason blames the wrong side.
func TestReview3DeletingTheRequestsSecretAfterThePointOfNoReturnIsAsDeletingTheRequest(t *testing.T) {
	for name, withdraw := range map[string]func(objs []runtime.Object) []runtime.Object{
		"SAFE (control): the request deleted": func(objs []runtime.Object) []runtime.Object {
			now := metav1.Now()
			for _, o := range objs {
				if r, ok := o.(*transferv1alpha1.StorageTransferRequest); ok {
					r.DeletionTimestamp = &now
				}
			}
			return append(objs, tokenSecret("prod", testToken))
		},
		"the request's Secret deleted": func(objs []runtime.Object) []runtime.Object { return objs },
		"the request's Secret given another token": func(objs []runtime.Object) []runtime.Object {
			return append(objs, tokenSecret("prod", otherToken))
		},
	} {
		t.Run(name, func(t *testing.T) {
			var kube, api []runtime.Object
			for _, o := range withdraw(pastPointOfNoReturn()) {
				switch o.(type) {
				case *transferv1alpha1.StorageTransferRequest, *transferv1alpha1.StorageTransferAccept:
					api = append(api, o)
				default:
					kube = append(kube, o)
				}
			}
			h := newByHand(t, kube, nil, api, nil)
			h.fill(t)
			r := getAs[*transferv1alpha1.StorageTransferRequest](h.c.requests, "prod/request-name")
			s := plan.Next(gathered(t, h.c, r))
			if s.Action != plan.ActionReserveVolume {
				t.Errorf("Next() = %s (%s: %s), want %s: after the point of no return this withdrawal, as the request's deletion, does not stop the hand-over",
					s.Action, s.Reason, s.Message, plan.ActionReserveVolume)
			}
		})
	}
}

// readyToDeleteSource is a claim transfer whose next step is the
// source's deletion: the claim locked, its volume Retain, the target
// claim made. The accept's token is in the Secret test/transfer-token.
func readyToDeleteSource() []runtime.Object {
	r := r3Request(false)
	r.Finalizers = []string{plan.Finalizer}
	objs := lockedClaim("r1")
	src, pv := objs[0].(*v1.PersistentVolumeClaim), objs[1].(*v1.PersistentVolume)
	pv.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimRetain
	r.Status = transferv1alpha1.StorageTransferRequestStatus{Phase: transferv1alpha1.PhaseTransferring, TargetNamespace: "test", AcceptUID: "a-test-accept-name",
		Record: &transferv1alpha1.TransferRecord{Step: string(plan.ActionCreateTargetClaim), SourceUID: "c1", VolumeName: "pv-1",
			OriginalReclaimPolicy: v1.PersistentVolumeReclaimDelete, ClaimSpec: src.Spec.DeepCopy()}}
	target := targetClaim(r)
	target.UID = "t1"
	return append(objs, target, tokenSecret("test", testToken), r, r3Accept("test", "accept-name", true))
}

// REVIEW3 FINDING F, settled by design (docs/transfer.md, "Keeping the
// token in a Secret"): a token Secret counts until the transfer begins;
// from then on the transfer keeps the accept it matched, as with tokens in
// specs (which cannot change), and a withdrawal is the deletion of the
// request or the accept. Right before it deletes the source the controller
// reads the accept and the request afresh: the accept deleted then is
// seen; its Secret deleted then is, as documented, no withdrawal.
func TestReview3OnlyTheAcceptsDeletionWithdrawsOnceTheTransferBegan(t *testing.T) {
	for name, withdraw := range map[string]func(h *byHand) error{
		"the accept deleted": func(h *byHand) error {
			return h.api.Tracker().Delete(transferv1alpha1.SchemeGroupVersion.WithResource("storagetransferaccepts"), "test", "accept-name")
		},
		"the accept's Secret deleted": func(h *byHand) error {
			return h.kube.Tracker().Delete(secretsResource, "test", "transfer-token")
		},
	} {
		t.Run(name, func(t *testing.T) {
			var kube, api []runtime.Object
			for _, o := range readyToDeleteSource() {
				switch o.(type) {
				case *transferv1alpha1.StorageTransferRequest, *transferv1alpha1.StorageTransferAccept:
					api = append(api, o)
				default:
					kube = append(kube, o)
				}
			}
			h := newByHand(t, kube, nil, api, nil)
			withdrawn := false
			// The target's owner withdraws as the controller writes the
			// DeleteSource record: after the sync's look.
			h.api.PrependReactor("update", "storagetransferrequests", func(a clienttesting.Action) (bool, runtime.Object, error) {
				u := a.(clienttesting.UpdateAction)
				if r, ok := u.GetObject().(*transferv1alpha1.StorageTransferRequest); ok && !withdrawn && u.GetSubresource() == "status" &&
					r.Status.Record != nil && r.Status.Record.Step == string(plan.ActionDeleteSource) {
					withdrawn = true
					if err := withdraw(h); err != nil {
						t.Error(err)
					}
				}
				return false, nil, nil
			})
			err := h.syncRequest(t)
			if !withdrawn {
				t.Fatalf("Setup: the sync did not plan DeleteSource: %v", err)
			}
			_, gerr := h.kube.CoreV1().PersistentVolumeClaims("prod").Get(t.Context(), "data", metav1.GetOptions{})
			if deleted, want := apierrors.IsNotFound(gerr), name == "the accept's Secret deleted"; deleted != want {
				t.Errorf("The source claim deleted: %v, want %v (the sync: %v)", deleted, want, err)
			}
		})
	}
}

// REVIEW3 FINDING G (amplification). Every look at a request reads, with
// a GET to the API server, the Secret of every accept that names it, one
// GET per accept even when they all name the same Secret, and again at
// every look (each event, each 30 s while it waits, after completion
// too). Anyone may create accepts naming any request: N accepts cost N
// GETs (of up to 1 MiB each) per look at the victim's request, and one
// failed read fails the victim's whole sync.
func TestReview3ManyAcceptsNamingOneSecretCostOneReadPerLook(t *testing.T) {
	apiObjs := []runtime.Object{r3Request(false)}
	for i := range 50 {
		apiObjs = append(apiObjs, r3Accept("mallory", fmt.Sprintf("probe-%02d", i), true))
	}
	h := newByHand(t, []runtime.Object{tokenSecret("mallory", otherToken)}, nil, apiObjs, nil)
	h.fill(t)
	h.kube.ClearActions()
	r := getAs[*transferv1alpha1.StorageTransferRequest](h.c.requests, "prod/request-name")
	gathered(t, h.c, r)
	reads := 0
	for _, a := range h.kube.Actions() {
		if a.Matches("get", "secrets") {
			reads++
		}
	}
	if reads > 1 {
		t.Errorf("One look at prod/request-name read Secrets %d times for 50 accepts of mallory naming one Secret; want at most one read per Secret", reads)
	}
}

// SAFE: at one look, an accept is told the same (condition, phase,
// events) whether the request it names exists, waits, is pinned to
// another accept, or has its own Secret missing, for every state of the
// accept's own Secret: missing, of another type, malformed, forbidden,
// and well-formed with another token. (Over time it is not: finding A.)
func TestReview3SafeAnAcceptIsToldAlikeAtOneLook(t *testing.T) {
	wrongType := tokenSecret("mallory", otherToken)
	wrongType.Type = v1.SecretTypeOpaque
	secrets := map[string]func(h *byHand) []runtime.Object{
		"missing":         func(*byHand) []runtime.Object { return nil },
		"of another type": func(*byHand) []runtime.Object { return []runtime.Object{wrongType} },
		"malformed":       func(*byHand) []runtime.Object { return []runtime.Object{tokenSecret("mallory", "hunter2")} },
		"forbidden":       func(h *byHand) []runtime.Object { forbidSecrets(h, "mallory"); return nil },
		"another token":   func(*byHand) []runtime.Object { return []runtime.Object{tokenSecret("mallory", otherToken)} },
	}
	requests := map[string]func() []runtime.Object{
		"absent":  func() []runtime.Object { return nil },
		"waiting": func() []runtime.Object { return []runtime.Object{r3Request(false)} },
		"pinned to another accept": func() []runtime.Object {
			r := r3Request(false)
			r.Status.TargetNamespace, r.Status.AcceptUID = "test", "a-test-accept-name"
			return []runtime.Object{r, r3Accept("test", "accept-name", false)}
		},
		"its own Secret missing": func() []runtime.Object { return []runtime.Object{r3Request(true)} },
	}
	for secretName, secret := range secrets {
		t.Run(secretName, func(t *testing.T) {
			told := map[string]string{}
			for requestName, request := range requests {
				// The accept is named as the request's spec.acceptName:
				// the closest a prober can come.
				probe := r3Accept("mallory", "accept-name", true)
				h := newByHand(t, nil, nil, append(request(), probe), nil)
				ev := &fullEvents{}
				h.c.cfg.Recorder = ev
				for _, s := range secret(h) {
					if err := h.kube.Tracker().Add(s); err != nil {
						t.Fatal(err)
					}
				}
				h.fill(t)
				_, ctx := ktesting.NewTestContext(t)
				if _, err := h.c.syncRequest(ctx, "prod/request-name"); err != nil {
					t.Fatalf("%s: syncRequest: %v", requestName, err)
				}
				h.fill(t)
				if _, err := h.c.syncAccept(ctx, "mallory/accept-name"); err != nil {
					t.Fatalf("%s: syncAccept: %v", requestName, err)
				}
				// The accept's sync, having read its Secret, queues the
				// request, whose sync tells the accept.
				h.fill(t)
				if _, err := h.c.syncRequest(ctx, "prod/request-name"); err != nil {
					t.Fatalf("%s: syncRequest: %v", requestName, err)
				}
				told[requestName] = matchedOf(h.acceptOf(t, "mallory", "accept-name")) + " events " + strings.Join(ev.on("mallory", "accept-name"), "; ")
			}
			for requestName, got := range told {
				if got != told["absent"] {
					t.Errorf("The request %s: the accept is told\n  %s\nand when it is absent\n  %s", requestName, got, told["absent"])
				}
			}
		})
	}
}
