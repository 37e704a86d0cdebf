package transfer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/xns-csi/csi-provisioner/internal/transfer/match"
	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// syncRequest takes the next step of the request namespace/name. It
// returns how soon to look again when nothing but time will change what it
// waits for.
func (c *Controller) syncRequest(ctx context.Context, key string) (time.Duration, error) {
	r := getAs[*transferv1alpha1.StorageTransferRequest](c.requests, key)
	if r == nil {
		return 0, nil
	}
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "request", klog.KObj(r))
	ctx = klog.NewContext(ctx, logger)
	if r.Spec.Token == "" && r.Spec.TokenSecretRef == nil && r.DeletionTimestamp == nil {
		return 0, c.setToken(ctx, r)
	}
	o, err := c.gather(ctx, r)
	if err != nil {
		return 0, err
	}
	if err := c.readSourceAfresh(ctx, o); err != nil {
		return 0, err
	}
	switch r.Status.Phase {
	case transferv1alpha1.PhaseCompleted, transferv1alpha1.PhaseFailed:
		if err := c.tellAccepts(ctx, r, o); err != nil {
			return 0, err
		}
		if slices.Contains(r.Finalizers, plan.Finalizer) {
			// The transfer ended but finish was interrupted.
			return c.finish(ctx, r, o.Match.Accept)
		}
		if r.Status.Phase == transferv1alpha1.PhaseCompleted {
			return c.retire(ctx, r, o.Match.Accept)
		}
		// Kept, with the reason in its conditions, until its owner
		// deletes it.
		return 0, nil
	}
	step := plan.Next(o)
	logger.V(4).Info("Planned", "action", step.Action, "reason", step.Reason)
	if step.Action == plan.ActionBegin {
		var err error
		if r, err = c.addRequestFinalizer(ctx, r); err != nil {
			return 0, err
		}
		o.Request = r
	}
	if step.Admit {
		// A target that already exists (the cache is behind) is no
		// admission: the next plan, from a fresher cache, sees whose it is.
		if err := c.cfg.Admit(ctx, targetSnapshot(r)); Refusal(err) {
			step = plan.Refused(o, plan.ActionCreateTargetSnapshot, err.Error())
		} else if err != nil {
			return 0, fmt.Errorf("asking the target namespace to admit the target: %w", err)
		}
	}
	updated := r
	if !retryingRefused(r, step) {
		var err error
		if updated, err = c.writeStatus(ctx, r, o, step); err != nil {
			return 0, err
		}
	}
	// Once per sync, with the status just written: the target's owner
	// sees the new step at once.
	if err := c.tellAccepts(ctx, updated, o); err != nil {
		return 0, err
	}
	switch step.Action {
	case plan.ActionNone, plan.ActionBegin, plan.ActionStartRollback, plan.ActionStartReturn:
	case plan.ActionComplete, plan.ActionFail:
		return c.finish(ctx, updated, o.Match.Accept)
	default:
		logger.V(2).Info("Taking a step", "action", step.Action)
		if createsInTarget(step.Action) || step.Action == plan.ActionDeleteSource && !plan.PastPointOfNoReturn(o) {
			if err := c.acceptStillThere(ctx, updated); err != nil {
				return 0, err
			}
		}
		if step.Action == plan.ActionDeleteSource && !plan.PastPointOfNoReturn(o) {
			// The record may be the one a lost answer left, written
			// without a fence this time: the request is read afresh, so a
			// withdrawal since is not missed.
			if err := c.requestStillWanted(ctx, updated); err != nil {
				return 0, err
			}
		}
		if err := c.take(ctx, updated, o, step.Action); err != nil {
			if created := creates(step.Action); created && Refusal(err) {
				// Refused until someone changes the namespace: the plan
				// says what follows, and the status says why.
				o.Request = updated
				refused := plan.Refused(o, step.Action, err.Error())
				if _, err := c.writeStatus(ctx, updated, o, refused); err != nil {
					return 0, err
				}
				if refused.Action == plan.ActionNone {
					return waitInterval, nil
				}
				return 0, nil
			}
			// A conflict is a cache behind an object another controller
			// just wrote: retried at once, not worth an event.
			if !apierrors.IsConflict(err) {
				c.tell(updated, v1.EventTypeWarning, ReasonStepFailed, fmt.Sprintf("%s: %v", step.Action, err))
			}
			return 0, fmt.Errorf("%s: %w", step.Action, err)
		}
	}
	if step.Action == plan.ActionNone && step.Record == nil {
		return waitInterval, nil
	}
	return 0, nil
}

// retryingRefused reports whether step retries a create the target
// refused, with nothing new to record: the status keeps saying why it was
// refused until the create succeeds.
func retryingRefused(r *transferv1alpha1.StorageTransferRequest, step plan.Step) bool {
	rec := r.Status.Record
	cond := meta.FindStatusCondition(r.Status.Conditions, transferv1alpha1.ConditionTransferred)
	return creates(step.Action) && rec != nil && rec.Step == string(step.Action) &&
		(step.Record == nil || apiequality.Semantic.DeepEqual(step.Record, rec)) &&
		cond != nil && (cond.Reason == plan.ReasonTargetRefused || cond.Reason == plan.ReasonReturnRefused)
}

// readSourceAfresh reads the source from the API server when the record
// says the point of no return is taken but the cache shows the source
// intact: the planner then honors a withdrawal, which it must not do if
// the deletion was in fact sent and only the cache is behind. One read,
// in that window only.
func (c *Controller) readSourceAfresh(ctx context.Context, o *plan.Observed) error {
	rec := o.Request.Status.Record
	if rec == nil || !rec.PointOfNoReturn || rec.Returning {
		return nil
	}
	r := o.Request
	switch {
	case o.SourceClaim != nil && string(o.SourceClaim.UID) == rec.SourceUID && o.SourceClaim.DeletionTimestamp == nil:
		fresh, err := c.cfg.Kube.CoreV1().PersistentVolumeClaims(r.Namespace).Get(ctx, r.Spec.Source.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			o.SourceClaim = nil
		case err != nil:
			return fmt.Errorf("reading the source: %w", err)
		default:
			o.SourceClaim = fresh
		}
	case o.SourceSnapshot != nil && string(o.SourceSnapshot.UID) == rec.SourceUID && o.SourceSnapshot.DeletionTimestamp == nil:
		fresh, err := c.cfg.Snapshot.SnapshotV1().VolumeSnapshots(r.Namespace).Get(ctx, r.Spec.Source.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			o.SourceSnapshot = nil
		case err != nil:
			return fmt.Errorf("reading the source: %w", err)
		default:
			o.SourceSnapshot = fresh
		}
	}
	return nil
}

// requestStillWanted reads r from the API server before the source is
// deleted: being deleted (or another request of that name), it is
// withdrawn, and the sync fails for the next plan to roll back.
func (c *Controller) requestStillWanted(ctx context.Context, r *transferv1alpha1.StorageTransferRequest) error {
	fresh, err := c.cfg.API.TransferV1alpha1().StorageTransferRequests(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err), err == nil && (fresh.UID != r.UID || fresh.DeletionTimestamp != nil):
		return fmt.Errorf("StorageTransferRequest %s/%s is withdrawn: not deleting its source", r.Namespace, r.Name)
	case err != nil:
		return fmt.Errorf("reading StorageTransferRequest %s/%s: %w", r.Namespace, r.Name, err)
	}
	return nil
}

// createsInTarget reports whether action a creates an object in the
// target namespace.
func createsInTarget(a plan.Action) bool {
	return a == plan.ActionCreateTargetClaim || a == plan.ActionCreateTargetSnapshot
}

// acceptStillThere reads r's accept from the API server before the
// controller deletes the source or creates an object in the target
// namespace: an accept its cache still has may be gone (withdrawn, or its
// namespace deleted, perhaps created again by someone else, who must not
// receive the object). Gone, the sync fails and the next plan, from a
// fresher cache, rolls back or gives the object back.
func (c *Controller) acceptStillThere(ctx context.Context, r *transferv1alpha1.StorageTransferRequest) error {
	a, err := c.cfg.API.TransferV1alpha1().StorageTransferAccepts(r.Status.TargetNamespace).Get(ctx, r.Spec.AcceptName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err), err == nil && (string(a.UID) != r.Status.AcceptUID || a.DeletionTimestamp != nil):
		return fmt.Errorf("StorageTransferAccept %s/%s is gone: not creating anything in its namespace", r.Status.TargetNamespace, r.Spec.AcceptName)
	case err != nil:
		return fmt.Errorf("reading StorageTransferAccept %s/%s: %w", r.Status.TargetNamespace, r.Spec.AcceptName, err)
	}
	return nil
}

// creates reports whether action a creates an object.
func creates(a plan.Action) bool {
	switch a {
	case plan.ActionCreateTargetClaim, plan.ActionCreateTargetSnapshot, plan.ActionCreateTargetContent,
		plan.ActionCreateReturnContent, plan.ActionReturnSource:
		return true
	}
	return false
}

// setToken gives r a new token. The token is neither logged nor put in an
// event.
func (c *Controller) setToken(ctx context.Context, r *transferv1alpha1.StorageTransferRequest) error {
	token, err := c.cfg.Token()
	if err != nil {
		return err
	}
	r = r.DeepCopy()
	r.Spec.Token = token
	if _, err := c.cfg.API.TransferV1alpha1().StorageTransferRequests(r.Namespace).Update(ctx, r, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("setting the token: %w", err)
	}
	klog.FromContext(ctx).V(2).Info("Set the request's token")
	c.tell(r, v1.EventTypeNormal, ReasonTokenSet, "spec.token is set: give it to the owner of the target namespace for spec.requestToken of the StorageTransferAccept "+r.Spec.AcceptName)
	return nil
}

// addRequestFinalizer holds r until its transfer has finished, and
// returns r as updated.
func (c *Controller) addRequestFinalizer(ctx context.Context, r *transferv1alpha1.StorageTransferRequest) (*transferv1alpha1.StorageTransferRequest, error) {
	if slices.Contains(r.Finalizers, plan.Finalizer) {
		return r, nil
	}
	r = r.DeepCopy()
	r.Finalizers = append(r.Finalizers, plan.Finalizer)
	return c.cfg.API.TransferV1alpha1().StorageTransferRequests(r.Namespace).Update(ctx, r, metav1.UpdateOptions{})
}

// writeStatus writes the step's phase, conditions and record (the write-
// ahead record goes to the API server before the step changes anything),
// unless they are already there. The update is conditional on the
// resourceVersion the step was planned from: a record planned from a stale
// cache is refused and the request planned again.
func (c *Controller) writeStatus(ctx context.Context, r *transferv1alpha1.StorageTransferRequest, o *plan.Observed, step plan.Step) (*transferv1alpha1.StorageTransferRequest, error) {
	next := r.DeepCopy()
	st := &next.Status
	st.ObservedGeneration = r.Generation
	st.Phase = step.Phase
	if step.Record != nil {
		st.Record = step.Record
	}
	// Pinned at the first match, not when the transfer begins: from then
	// on no other accept takes the request, even one quoting a token that
	// leaked (an accept gone before the transfer began leaves the request
	// waiting for it: create another request).
	if st.AcceptUID == "" && o.Match.Accept != nil {
		st.TargetNamespace, st.AcceptUID = o.Match.Accept.Namespace, string(o.Match.Accept.UID)
	}
	matched := metav1.ConditionFalse
	if o.Match.Request.Matched {
		matched = metav1.ConditionTrue
	}
	// Also once the transfer has begun: an accept gone is told, not left
	// saying it matches.
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: transferv1alpha1.ConditionMatched, Status: matched,
		Reason: o.Match.Request.Reason, Message: o.Match.Request.Message, ObservedGeneration: r.Generation})
	transferred := metav1.ConditionFalse
	if step.Phase == transferv1alpha1.PhaseCompleted {
		transferred = metav1.ConditionTrue
		now := metav1.NewTime(c.clock.Now())
		st.CompletionTime = &now
	} else if step.Phase == transferv1alpha1.PhaseFailed {
		now := metav1.NewTime(c.clock.Now())
		st.CompletionTime = &now
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: transferv1alpha1.ConditionTransferred, Status: transferred,
		Reason: step.Reason, Message: step.Message, ObservedGeneration: r.Generation})
	// Shown once the source is seen deleted, not when the record that
	// announces its deletion is written.
	seen := *o
	seen.Request = next
	if plan.PastPointOfNoReturn(&seen) {
		msg := "the source was deleted: the object is handed over, or given back"
		if st.Record.Returning {
			msg = "the source was deleted and the target refused the object: it is given back to the source namespace"
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: transferv1alpha1.ConditionPastPointOfNoReturn, Status: metav1.ConditionTrue,
			Reason: step.Reason, Message: msg, ObservedGeneration: r.Generation})
	} else {
		meta.RemoveStatusCondition(&st.Conditions, transferv1alpha1.ConditionPastPointOfNoReturn)
	}
	if apiequality.Semantic.DeepEqual(r.Status, next.Status) {
		return r, nil
	}
	updated, err := c.cfg.API.TransferV1alpha1().StorageTransferRequests(r.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("writing the status (%s): %w", step.Action, err)
	}
	if step.Reason != "" {
		typ := v1.EventTypeNormal
		if step.Phase == transferv1alpha1.PhaseFailed || step.Reason == plan.ReasonRollingBack || step.Reason == plan.ReasonNeedsAttention || step.Reason == plan.ReasonBoundElsewhere ||
			step.Reason == plan.ReasonReturnRefused {
			typ = v1.EventTypeWarning
		}
		c.tellOnce(updated, typ, step.Reason, step.Message)
	}
	return updated, nil
}

// finish ends the transfer whose final phase and Transferred condition r
// has: the accept is told, then the request's finalizer removed, then the
// transfer counted. Until its finalizer is gone the transfer has not
// finished, and a finish interrupted by a failed write is done again by
// the next sync (syncRequest) with every effect once: the accept's status
// is written only if it differs and its event told once; the transfer is
// counted only by the sync whose removal of the finalizer succeeded, and
// that removal is conditional on the resourceVersion, so only one can.
func (c *Controller) finish(ctx context.Context, r *transferv1alpha1.StorageTransferRequest, a *transferv1alpha1.StorageTransferAccept) (time.Duration, error) {
	phase, reason, message := r.Status.Phase, "", ""
	if cond := meta.FindStatusCondition(r.Status.Conditions, transferv1alpha1.ConditionTransferred); cond != nil {
		reason, message = cond.Reason, cond.Message
	}
	if a != nil {
		if err := c.setAcceptStatus(ctx, a, match.Verdict{Matched: true, Reason: match.ReasonMatched, Message: "matches StorageTransferRequest " + r.Namespace + "/" + r.Name}, r, nil); err != nil {
			return 0, err
		}
		typ := v1.EventTypeNormal
		if phase == transferv1alpha1.PhaseFailed {
			typ = v1.EventTypeWarning
		}
		c.tellOnce(a, typ, reason, message)
	}
	if err := c.removeFinalizer(ctx, r); err != nil {
		return 0, err
	}
	c.cfg.Metrics.ended(r.Spec.Source.Kind, phase)
	klog.FromContext(ctx).Info("Transfer ended", "phase", phase, "reason", reason)
	if phase == transferv1alpha1.PhaseCompleted {
		return c.cfg.Retention + time.Second, nil
	}
	return 0, nil
}

// removeFinalizer lets r go.
func (c *Controller) removeFinalizer(ctx context.Context, r *transferv1alpha1.StorageTransferRequest) error {
	if !slices.Contains(r.Finalizers, plan.Finalizer) {
		return nil
	}
	r = r.DeepCopy()
	r.Finalizers = slices.DeleteFunc(r.Finalizers, func(f string) bool { return f == plan.Finalizer })
	_, err := c.cfg.API.TransferV1alpha1().StorageTransferRequests(r.Namespace).Update(ctx, r, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// retire deletes a finished transfer's request and accept once the
// retention has passed, with an event in both namespaces.
func (c *Controller) retire(ctx context.Context, r *transferv1alpha1.StorageTransferRequest, a *transferv1alpha1.StorageTransferAccept) (time.Duration, error) {
	if r.Status.CompletionTime != nil {
		if left := r.Status.CompletionTime.Add(c.cfg.Retention).Sub(c.clock.Now()); left > 0 {
			return left, nil
		}
	}
	msg := fmt.Sprintf("the transfer of %s %s/%s to %s/%s completed; deleting its StorageTransferRequest and StorageTransferAccept",
		r.Spec.Source.Kind, r.Namespace, r.Spec.Source.Name, r.Status.TargetNamespace, r.Spec.TargetName)
	if a != nil {
		c.tell(a, v1.EventTypeNormal, ReasonTransferRetired, msg)
		if err := c.cfg.API.TransferV1alpha1().StorageTransferAccepts(a.Namespace).Delete(ctx, a.Name,
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &a.UID}}); err != nil && !apierrors.IsNotFound(err) {
			return 0, err
		}
	}
	c.tell(r, v1.EventTypeNormal, ReasonTransferRetired, msg)
	err := c.cfg.API.TransferV1alpha1().StorageTransferRequests(r.Namespace).Delete(ctx, r.Name,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &r.UID}})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	return 0, err
}

// tellAccepts writes the verdict and phase of every accept that names r,
// and to the one it matches what r offers, as observed in o.
func (c *Controller) tellAccepts(ctx context.Context, r *transferv1alpha1.StorageTransferRequest, o *plan.Observed) error {
	res := o.Match
	objs, _ := c.accepts.GetIndexer().ByIndex(byRequest, r.Namespace+"/"+r.Name)
	slices.SortFunc(objs, func(a, b any) int {
		return strings.Compare(cache.MetaObjectToName(a.(metav1.Object)).String(), cache.MetaObjectToName(b.(metav1.Object)).String())
	})
	for _, obj := range objs {
		a := obj.(*transferv1alpha1.StorageTransferAccept)
		v, ok := res.Accepts[a.Namespace+"/"+a.Name]
		if !ok {
			continue
		}
		if err := c.setAcceptStatus(ctx, a, v, r, plan.Offer(o)); err != nil {
			if a != res.Accept {
				// Another namespace's accept must not hold up the transfer
				// (e.g. a status the API server refuses).
				klog.FromContext(ctx).V(2).Info("Could not tell an accept", "accept", klog.KObj(a), "err", err)
				continue
			}
			return err
		}
	}
	return nil
}

// setAcceptStatus writes an accept's phase and conditions: Matched from
// the verdict v, and, once it matches request r (nil for none), the
// request's phase and its Transferred condition, so that the target's
// owner sees where the transfer is and why it stopped. A refusal is told
// once as an event.
func (c *Controller) setAcceptStatus(ctx context.Context, a *transferv1alpha1.StorageTransferAccept, v match.Verdict, r *transferv1alpha1.StorageTransferRequest, offer *transferv1alpha1.TransferOffer) error {
	next := a.DeepCopy()
	next.Status.ObservedGeneration = a.Generation
	next.Status.Phase = transferv1alpha1.PhasePending
	status := metav1.ConditionFalse
	if v.Matched {
		status = metav1.ConditionTrue
		next.Status.Phase = transferv1alpha1.PhaseMatched
		if r != nil && r.Status.Phase != "" {
			next.Status.Phase = r.Status.Phase
		}
		if offer != nil {
			next.Status.Offered = offer
		}
	} else {
		next.Status.Offered = nil
	}
	meta.SetStatusCondition(&next.Status.Conditions, metav1.Condition{Type: transferv1alpha1.ConditionMatched, Status: status,
		Reason: v.Reason, Message: v.Message, ObservedGeneration: a.Generation})
	var transferred *metav1.Condition
	if v.Matched && r != nil {
		transferred = meta.FindStatusCondition(r.Status.Conditions, transferv1alpha1.ConditionTransferred)
	}
	if transferred != nil {
		// Written when its reason changes, not at each step of a transfer
		// under way: one write to the accept per stop, not per step.
		if old := meta.FindStatusCondition(a.Status.Conditions, transferv1alpha1.ConditionTransferred); old == nil ||
			old.Reason != transferred.Reason || old.Status != transferred.Status {
			meta.SetStatusCondition(&next.Status.Conditions, metav1.Condition{Type: transferv1alpha1.ConditionTransferred, Status: transferred.Status,
				Reason: transferred.Reason, Message: transferred.Message, ObservedGeneration: a.Generation})
		}
	} else {
		meta.RemoveStatusCondition(&next.Status.Conditions, transferv1alpha1.ConditionTransferred)
	}
	if apiequality.Semantic.DeepEqual(a.Status, next.Status) {
		return nil
	}
	if _, err := c.cfg.API.TransferV1alpha1().StorageTransferAccepts(a.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("writing the status of accept %s/%s: %w", a.Namespace, a.Name, err)
	}
	if !v.Matched {
		c.tellOnce(a, v1.EventTypeWarning, v.Reason, v.Message)
	}
	return nil
}

// syncAccept tells an accept what is its own to know: whether the Secret
// its spec.requestTokenSecretRef names serves (read here, every
// waitInterval until the transfer begins, whether or not its request
// exists, and kept for the request's sync), and, when its request does
// not exist, RequestNotFound. The request's sync tells it the rest.
func (c *Controller) syncAccept(ctx context.Context, key string) (time.Duration, error) {
	a := getAs[*transferv1alpha1.StorageTransferAccept](c.accepts, key)
	if a == nil {
		c.forgetAcceptSecret(key)
		return 0, nil
	}
	switch a.Status.Phase {
	case transferv1alpha1.PhaseTransferring, transferv1alpha1.PhaseCompleted, transferv1alpha1.PhaseFailed:
		return 0, nil // its request's transfer began: the request tells it
	}
	var after time.Duration
	var problem *match.Verdict
	requestKey := a.Spec.SourceNamespace + "/" + a.Spec.RequestName
	if a.Spec.RequestTokenSecretRef != nil {
		read, changed, err := c.readAcceptSecret(ctx, a)
		if err != nil {
			return 0, err
		}
		problem, after = read.problem, waitInterval
		if changed {
			c.queue.Add(requestKeyPrefix + requestKey)
		}
	}
	if r := getAs[*transferv1alpha1.StorageTransferRequest](c.requests, requestKey); r != nil {
		return after, nil // the request's sync tells it
	}
	// Told alike whether or not its request exists: the verdict says
	// nothing of the source namespace.
	v := match.RequestNotFound(a)
	if problem != nil {
		v = *problem
	}
	return after, c.setAcceptStatus(ctx, a, v, nil, nil)
}

// tell emits an event on obj.
func (c *Controller) tell(obj runtime.Object, typ, reason, message string) {
	c.cfg.Recorder.Event(obj, typ, reason, message)
}

// tellOnce emits an event on obj unless the last event told on it had the
// same reason and message: a wait is told once, not on every look.
func (c *Controller) tellOnce(obj runtime.Object, typ, reason, message string) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	said := reason + "\x00" + message
	c.mu.Lock()
	last := c.told[string(m.GetUID())]
	c.told[string(m.GetUID())] = said
	c.mu.Unlock()
	if last != said {
		c.cfg.Recorder.Event(obj, typ, reason, message)
	}
}

// forget drops what was told on the object of uid (it is gone).
func (c *Controller) forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.told, string(uid))
}
