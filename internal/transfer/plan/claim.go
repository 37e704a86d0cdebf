package plan

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// preflightClaim checks that a claim can be transferred, before anything
// changes; a refusal waits and changes nothing. A claim used by a running
// pod waits here, not after its deletion: until then nothing is changed
// and the transfer can still be withdrawn.
func preflightClaim(o *Observed) Step {
	r, src, pv := o.Request, o.SourceClaim, o.Volume
	matched := transferv1alpha1.PhaseMatched
	switch {
	case src == nil:
		return wait(matched, ReasonSourceNotFound, "PersistentVolumeClaim %s/%s not found", r.Namespace, r.Spec.Source.Name)
	case src.DeletionTimestamp != nil:
		return wait(matched, ReasonSourceDeleting, "PersistentVolumeClaim %s/%s is being deleted", r.Namespace, src.Name)
	case lockedByOther(src, r):
		return wait(matched, ReasonSourceLocked, "PersistentVolumeClaim %s/%s is being transferred by another StorageTransferRequest", r.Namespace, src.Name)
	case ownedByPod(src):
		return wait(matched, ReasonEphemeral, "PersistentVolumeClaim %s/%s belongs to a pod's ephemeral volume and is deleted with the pod: it cannot be transferred", r.Namespace, src.Name)
	case src.Status.Phase != v1.ClaimBound || src.Spec.VolumeName == "":
		return wait(matched, ReasonSourceNotReady, "PersistentVolumeClaim %s/%s is not bound yet", r.Namespace, src.Name)
	case pv == nil:
		return wait(matched, ReasonSourceNotReady, "PersistentVolume %s of PersistentVolumeClaim %s/%s is not found", src.Spec.VolumeName, r.Namespace, src.Name)
	case pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != src.UID:
		return wait(matched, ReasonBoundElsewhere, "PersistentVolume %s is not bound to PersistentVolumeClaim %s/%s: the controller does not guess", pv.Name, r.Namespace, src.Name)
	case o.TargetClaim != nil:
		return wait(matched, ReasonTargetNameTaken, "a PersistentVolumeClaim %s/%s already exists: delete it or choose another spec.targetName", TargetNamespace(o), r.Spec.TargetName)
	case tooLarge(o) != "":
		return wait(matched, ReasonTooLarge, "%s", tooLarge(o))
	case len(o.Pods) > 0:
		return wait(matched, ReasonSourceInUse, "PersistentVolumeClaim %s/%s is used by pod %s: the transfer waits until no pod uses it", r.Namespace, src.Name, strings.Join(o.Pods, ", "))
	}
	return Step{Action: ActionBegin, Phase: transferv1alpha1.PhaseTransferring, Reason: ReasonTransferring,
		Message: "transfer of PersistentVolumeClaim " + r.Namespace + "/" + src.Name + " to " + TargetNamespace(o) + "/" + r.Spec.TargetName + " begins",
		Record: &transferv1alpha1.TransferRecord{
			Step:                  string(ActionBegin),
			SourceUID:             string(src.UID),
			VolumeName:            pv.Name,
			OriginalReclaimPolicy: pv.Spec.PersistentVolumeReclaimPolicy,
			ClaimSpec:             src.Spec.DeepCopy(),
		}}
}

// targetClaimOurs reports whether c is the target claim this transfer
// created: its annotation names the request, and its spec is the one the
// transfer would create. The annotation alone is not proof: the request's
// UID is on every object the transfer creates, and the target namespace's
// owner may put it on a claim of their own (another class, access mode or
// volume mode, which the PV controller would never bind, or would bind
// wrongly).
func targetClaimOurs(c *v1.PersistentVolumeClaim, r *transferv1alpha1.StorageTransferRequest) bool {
	rec := r.Status.Record
	return ours(c, r) && rec != nil && rec.ClaimSpec != nil && claimSpecMatches(c.Spec, rec.ClaimSpec, rec.VolumeName)
}

// claimSpecMatches reports whether got is the spec of a claim the
// transfer creates from want, naming volume.
func claimSpecMatches(got v1.PersistentVolumeClaimSpec, want *v1.PersistentVolumeClaimSpec, volume string) bool {
	return got.VolumeName == volume &&
		ptr.Deref(got.StorageClassName, "") == ptr.Deref(want.StorageClassName, "") &&
		slices.Equal(got.AccessModes, want.AccessModes) &&
		ptr.Deref(got.VolumeMode, v1.PersistentVolumeFilesystem) == ptr.Deref(want.VolumeMode, v1.PersistentVolumeFilesystem) &&
		ptr.Deref(got.VolumeAttributesClassName, "") == ptr.Deref(want.VolumeAttributesClassName, "") &&
		apiequality.Semantic.DeepEqual(got.Selector, want.Selector) &&
		apiequality.Semantic.DeepEqual(got.Resources.Requests, want.Resources.Requests)
}

// ownedByPod reports whether c is the claim of a generic ephemeral volume:
// its controller is a pod.
func ownedByPod(c *v1.PersistentVolumeClaim) bool {
	ref := metav1.GetControllerOf(c)
	return ref != nil && ref.Kind == "Pod" && ref.APIVersion == "v1"
}

// claimLocked reports whether r holds the lock and the finalizer of c.
func claimLocked(c *v1.PersistentVolumeClaim, r *transferv1alpha1.StorageTransferRequest) bool {
	return lockedBy(c, r) && slices.Contains(c.Finalizers, Finalizer)
}

// forwardClaim is the next step of a claim transfer under way. Before the
// point of no return the target claim is created, Pending, naming the
// volume: the target namespace's admission (quota, LimitRange, policies,
// a terminating namespace) answers, and the name is taken, while the
// source is still intact. Only then is the source deleted.
func forwardClaim(o *Observed) Step {
	rec := o.Request.Status.Record
	src := o.SourceClaim
	if src != nil && string(src.UID) != rec.SourceUID {
		src = nil // a new claim of the same name is not the one being transferred
	}
	switch {
	case rec.Returning:
		return returnClaim(o, src)
	case src != nil && src.DeletionTimestamp == nil:
		// Intact: not past the point of no return, whatever the record
		// says (its record is written before the deletion, which a crash
		// or a lost answer may not have sent): a withdrawal is honored.
		return prepareClaim(o, src)
	case rec.PointOfNoReturn:
		return handOverClaim(o, src)
	}
	// Its owner deleted the source before the point of no return.
	if s, ok := withdrawnWhileDeleted(o); ok {
		return s
	}
	pv := o.Volume
	if src == nil || !claimLocked(src, o.Request) || pv == nil || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != src.UID {
		// Nothing held it: the PV controller reclaims the volume as its
		// policy says. Going on would race that.
		r := o.Request
		return startRollback(rec, ReasonSourceDeletedBefore, "PersistentVolumeClaim %s/%s was deleted before the transfer held it", r.Namespace, r.Spec.Source.Name)
	}
	// Held by this transfer's finalizer, its volume bound to it: the
	// transfer hands it over as agreed.
	return handOverClaim(o, src)
}

// prepareClaim is a step before the point of no return, with the source
// claim there: lock it, retain its volume, create the target claim, then
// delete the source.
func prepareClaim(o *Observed, src *v1.PersistentVolumeClaim) Step {
	r, rec, pv, target := o.Request, o.Request.Status.Record, o.Volume, o.TargetClaim
	targetNS := TargetNamespace(o)
	if s, ok := withdrawn(o, src, "PersistentVolumeClaim"); ok {
		return s
	}
	switch {
	case pv == nil || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != src.UID:
		return startRollback(rec, ReasonSourceChanged, "PersistentVolume %s is no longer bound to PersistentVolumeClaim %s/%s", rec.VolumeName, r.Namespace, src.Name)
	case target != nil && !targetClaimOurs(target, r):
		return startRollback(rec, ReasonTargetConflict, "a PersistentVolumeClaim %s/%s that this transfer did not create exists", targetNS, r.Spec.TargetName)
	case target != nil && target.DeletionTimestamp != nil:
		return startRollback(rec, ReasonTargetConflict, "PersistentVolumeClaim %s/%s, created by this transfer, is being deleted", targetNS, r.Spec.TargetName)
	case tooLarge(o) != "":
		// Resized past what the accept takes since the transfer began.
		return startRollback(rec, ReasonTooLarge, "%s", tooLarge(o))
	case !claimLocked(src, r):
		return act(rec, ActionLockSource, "locking PersistentVolumeClaim %s/%s", r.Namespace, src.Name)
	case pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimRetain:
		return act(rec, ActionRetainVolume, "setting the reclaim policy of PersistentVolume %s to Retain", pv.Name)
	case len(o.Pods) > 0:
		return wait(transferv1alpha1.PhaseTransferring, ReasonSourceInUse, "PersistentVolumeClaim %s/%s is used by pod %s: the transfer waits until no pod uses it", r.Namespace, src.Name, strings.Join(o.Pods, ", "))
	case resizing(src, pv):
		return wait(transferv1alpha1.PhaseTransferring, ReasonSourceNotReady, "PersistentVolumeClaim %s/%s asks for more than the capacity of PersistentVolume %s: the transfer waits until the resize has finished", r.Namespace, src.Name, pv.Name)
	case target != nil && !claimSpecMatches(target.Spec, &src.Spec, rec.VolumeName):
		// Created from the source's spec as it was (resized, or its
		// volume attributes class changed since): made again.
		return act(rec, ActionDeleteTargetClaim, "deleting PersistentVolumeClaim %s/%s, created before PersistentVolumeClaim %s/%s changed", targetNS, r.Spec.TargetName, r.Namespace, src.Name)
	case target == nil:
		// The claim names the volume, which is still bound to the source:
		// the PV controller leaves it Pending.
		s := act(rec, ActionCreateTargetClaim, "creating PersistentVolumeClaim %s/%s, Pending until the volume is handed over", targetNS, r.Spec.TargetName)
		s.Record.ClaimSpec = src.Spec.DeepCopy()
		return s
	}
	return deleteSourceClaim(rec, src)
}

// handOverClaim is a step past the point of no return: the source deleted,
// the volume bound to the target claim, the reclaim policy restored. A
// target that is gone or refused gives the volume back (returnClaim).
func handOverClaim(o *Observed, src *v1.PersistentVolumeClaim) Step {
	r, rec, pv, target := o.Request, o.Request.Status.Record, o.Volume, o.TargetClaim
	targetNS := TargetNamespace(o)
	transferring := transferv1alpha1.PhaseTransferring
	if rec.HandedOver {
		return finishClaim(o, src, complete(o, transferv1alpha1.KindPersistentVolumeClaim))
	}
	switch {
	case src != nil && src.DeletionTimestamp == nil && pv != nil && resizing(src, pv):
		return wait(transferring, ReasonSourceNotReady, "PersistentVolumeClaim %s/%s asks for more than the capacity of PersistentVolume %s: the transfer waits until the resize has finished", r.Namespace, src.Name, pv.Name)
	case src != nil && src.DeletionTimestamp == nil:
		return deleteSourceClaim(rec, src)
	case src != nil && heldByOthers(src):
		return waitForPods(o, src)
	case pv == nil:
		return wait(transferring, ReasonNeedsAttention, "PersistentVolume %s is gone", rec.VolumeName)
	}
	ref := pv.Spec.ClaimRef
	bound := ref != nil && ref.Namespace == targetNS && ref.Name == r.Spec.TargetName && ref.UID != ""
	// Bound by this transfer (it binds only a target claim of the recorded
	// spec): the target's owner may have resized it since.
	live := bound && target != nil && target.UID == ref.UID && target.DeletionTimestamp == nil
	switch {
	case live && target.Status.Phase != v1.ClaimBound:
		return wait(transferring, ReasonWaitingForTarget, "waiting for PersistentVolumeClaim %s/%s to be bound to %s", targetNS, r.Spec.TargetName, pv.Name)
	case live:
		// Restoring the reclaim policy is the hand-over: a target claim
		// deleted after it goes as that policy says.
		return finishClaim(o, src, complete(o, transferv1alpha1.KindPersistentVolumeClaim))
	case bound:
		return startReturn(rec, "PersistentVolumeClaim %s/%s was deleted before the transfer completed", targetNS, r.Spec.TargetName)
	case ref != nil && ref.UID != "" && string(ref.UID) != rec.SourceUID:
		return wait(transferring, ReasonBoundElsewhere, "PersistentVolume %s is bound to %s/%s, neither the source nor the target: the controller does not guess", pv.Name, ref.Namespace, ref.Name)
	case pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimRetain:
		return commit(rec, ActionRetainVolume, "setting the reclaim policy of PersistentVolume %s to Retain", pv.Name)
	case o.Match.Accept == nil:
		return startReturn(rec, "the StorageTransferAccept was deleted before the volume was handed over")
	case target != nil && !targetClaimOurs(target, r):
		return startReturn(rec, "the name %s/%s was taken by a PersistentVolumeClaim this transfer did not create", targetNS, r.Spec.TargetName)
	case target != nil && target.DeletionTimestamp != nil:
		return startReturn(rec, "PersistentVolumeClaim %s/%s was deleted before the volume was handed over", targetNS, r.Spec.TargetName)
	case target == nil:
		return commit(rec, ActionCreateTargetClaim, "creating PersistentVolumeClaim %s/%s", targetNS, r.Spec.TargetName)
	}
	return commit(rec, ActionReserveVolume, "binding PersistentVolume %s to PersistentVolumeClaim %s/%s", pv.Name, targetNS, r.Spec.TargetName)
}

// finishClaim restores the volume's reclaim policy and lets the deleted
// source claim go, then ends with last. Restoring the policy on a volume
// bound to the target is the hand-over (last completes the transfer).
func finishClaim(o *Observed, src *v1.PersistentVolumeClaim, last Step) Step {
	rec, pv := o.Request.Status.Record, o.Volume
	switch {
	case pv != nil && pv.Spec.PersistentVolumeReclaimPolicy != rec.OriginalReclaimPolicy:
		s := handOver(commit(rec, ActionRestoreReclaimPolicy, "setting the reclaim policy of PersistentVolume %s back to %s", pv.Name, rec.OriginalReclaimPolicy))
		if rec.Returning {
			s.Reason, s.Message = ReasonTargetRefused, rec.ReturnMessage+"; giving it back: "+s.Message
		}
		return s
	case !rec.HandedOver:
		// Handed over, or back: from now on its owner owns it.
		return handOver(commit(rec, ActionNone, "PersistentVolume %s is handed over", rec.VolumeName))
	case src != nil && slices.Contains(src.Finalizers, Finalizer):
		return commit(rec, ActionReleaseSource, "removing the finalizer of the deleted PersistentVolumeClaim %s/%s", src.Namespace, src.Name)
	}
	return last
}

// returnClaim gives the volume back to the source namespace, under the
// source claim's name, after the target refused it: the target claim this
// transfer created is deleted, the deleted source claim let go, a claim of
// the recorded spec created in its place and the volume bound to it.
func returnClaim(o *Observed, src *v1.PersistentVolumeClaim) Step {
	r, rec, pv, target := o.Request, o.Request.Status.Record, o.Volume, o.TargetClaim
	transferring := transferv1alpha1.PhaseTransferring
	back := o.SourceClaim
	if back != nil && (!ours(back, r) || string(back.UID) == rec.SourceUID) {
		back = nil
	}
	ref := (*v1.ObjectReference)(nil)
	if pv != nil {
		ref = pv.Spec.ClaimRef
	}
	toTarget := ref != nil && ref.UID != "" && ref.Namespace == TargetNamespace(o) && ref.Name == r.Spec.TargetName
	if rec.HandedOver {
		// Given back: its owner owns it (and may have deleted it since,
		// as its policy says); nothing is made again.
		if s := finishClaim(o, src, returned(o, transferv1alpha1.KindPersistentVolumeClaim)); s.Action != ActionFail {
			return s
		}
		if back != nil && lockedBy(back, r) {
			return giveBack(rec, ActionUnlockSource, "unlocking PersistentVolumeClaim %s/%s", back.Namespace, back.Name)
		}
		return returned(o, transferv1alpha1.KindPersistentVolumeClaim)
	}
	switch {
	case pv == nil:
		return wait(transferring, ReasonNeedsAttention, "%s; PersistentVolume %s is gone", rec.ReturnMessage, rec.VolumeName)
	case toTarget && target != nil && target.UID == ref.UID:
		return wait(transferring, ReasonTargetRefused, "%s; waiting for PersistentVolumeClaim %s/%s to be deleted", rec.ReturnMessage, target.Namespace, target.Name)
	case back != nil && (ref != nil && ref.UID == back.UID && back.Status.Phase == v1.ClaimBound || back.DeletionTimestamp != nil):
		// Given back (or deleted by its owner meanwhile: then it goes as
		// the restored policy says): the policy, then the lock that kept
		// other transfers off it until now.
		if s := finishClaim(o, src, returned(o, transferv1alpha1.KindPersistentVolumeClaim)); s.Action != ActionFail {
			return s
		}
		if lockedBy(back, r) {
			return giveBack(rec, ActionUnlockSource, "unlocking PersistentVolumeClaim %s/%s", back.Namespace, back.Name)
		}
		return returned(o, transferv1alpha1.KindPersistentVolumeClaim)
	case ref != nil && ref.UID != "" && string(ref.UID) != rec.SourceUID && !toTarget && (back == nil || ref.UID != back.UID):
		return wait(transferring, ReasonBoundElsewhere, "%s; PersistentVolume %s is bound to %s/%s: the controller does not guess", rec.ReturnMessage, pv.Name, ref.Namespace, ref.Name)
	case target != nil && ours(target, r) && target.DeletionTimestamp == nil:
		return giveBack(rec, ActionDeleteTargetClaim, "deleting PersistentVolumeClaim %s/%s, which the volume was not bound to", target.Namespace, target.Name)
	case src != nil && heldByOthers(src):
		return waitForPods(o, src)
	case src != nil && slices.Contains(src.Finalizers, Finalizer):
		return giveBack(rec, ActionReleaseSource, "removing the finalizer of the deleted PersistentVolumeClaim %s/%s", src.Namespace, src.Name)
	case src != nil:
		return wait(transferring, ReasonTargetRefused, "%s; waiting for the deleted PersistentVolumeClaim %s/%s to go", rec.ReturnMessage, src.Namespace, src.Name)
	case o.SourceClaim != nil && back == nil:
		return wait(transferring, ReasonNeedsAttention, "%s; a new PersistentVolumeClaim %s/%s exists, so the volume cannot be given back under that name: "+
			"PersistentVolume %s keeps the data (Retain); to bind it to a claim of another name, set its spec.claimRef to that claim, created with spec.volumeName %s", rec.ReturnMessage, r.Namespace, r.Spec.Source.Name, pv.Name, pv.Name)
	case back == nil:
		return giveBack(rec, ActionReturnSource, "creating PersistentVolumeClaim %s/%s again, naming PersistentVolume %s", r.Namespace, r.Spec.Source.Name, pv.Name)
	case ref == nil || ref.UID != back.UID:
		return giveBack(rec, ActionReserveVolumeForSource, "binding PersistentVolume %s to PersistentVolumeClaim %s/%s", pv.Name, r.Namespace, back.Name)
	}
	return wait(transferring, ReasonTargetRefused, "%s; waiting for PersistentVolumeClaim %s/%s to be bound to %s", rec.ReturnMessage, r.Namespace, back.Name, pv.Name)
}

// heldByOthers reports whether a claim being deleted is held by another
// finalizer than this transfer's (pvc-protection, while a pod uses it).
func heldByOthers(c *v1.PersistentVolumeClaim) bool {
	return slices.ContainsFunc(c.Finalizers, func(f string) bool { return f != Finalizer })
}

// waitForPods waits for the pods that keep the deleted source claim.
func waitForPods(o *Observed, src *v1.PersistentVolumeClaim) Step {
	msg := fmt.Sprintf("waiting for every pod using PersistentVolumeClaim %s/%s to stop (pvc-protection)", src.Namespace, src.Name)
	if len(o.Pods) > 0 {
		msg += ": " + strings.Join(o.Pods, ", ")
	}
	return wait(transferv1alpha1.PhaseTransferring, ReasonSourceInUse, "%s", msg)
}

// deleteSourceClaim is the point of no return of a claim transfer. Its
// record carries the claim's spec as it is now, not as it was when the
// transfer began: a claim resized meanwhile is given back with its new
// size (the deletion is conditional on the claim's resourceVersion, so the
// spec recorded is the spec deleted).
func deleteSourceClaim(rec *transferv1alpha1.TransferRecord, src *v1.PersistentVolumeClaim) Step {
	s := commit(rec, ActionDeleteSource, "deleting PersistentVolumeClaim %s/%s (its volume is Retain and the claim held by a finalizer)", src.Namespace, src.Name)
	s.Record.ClaimSpec = src.Spec.DeepCopy()
	return s
}

// resizing reports whether claim c asks for more storage than its volume
// has: a target claim asking for that much would never be bound to it.
func resizing(c *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) bool {
	request, ok := c.Spec.Resources.Requests[v1.ResourceStorage]
	capacity, known := pv.Spec.Capacity[v1.ResourceStorage]
	return ok && known && request.Cmp(capacity) > 0
}

// rollbackClaim undoes a claim transfer before its point of no return:
// the target claim it created (never bound: the volume was the source's),
// the reclaim policy of the volume while it is still the source's, then
// the lock.
func rollbackClaim(o *Observed) Step {
	r, rec := o.Request, o.Request.Status.Record
	src, pv, target := o.SourceClaim, o.Volume, o.TargetClaim
	if src != nil && string(src.UID) != rec.SourceUID {
		src = nil
	}
	// What this transfer changed on the source and its volume is its own
	// only while it holds the lock: a transfer that lost the race for it
	// leaves the winner's lock, finalizer and Retain alone.
	mine := src == nil || lockedBy(src, r) || !o.LockHolderExists
	sources := pv != nil && pv.Spec.ClaimRef != nil && string(pv.Spec.ClaimRef.UID) == rec.SourceUID
	switch {
	case target != nil && ours(target, r) && target.DeletionTimestamp == nil && !(pv != nil && pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.UID == target.UID):
		return undo(rec, ActionDeleteTargetClaim, "deleting PersistentVolumeClaim %s/%s, which the volume was not bound to", target.Namespace, target.Name)
	case mine && sources && pv.Spec.PersistentVolumeReclaimPolicy != rec.OriginalReclaimPolicy:
		return undo(rec, ActionRestoreReclaimPolicy, "setting the reclaim policy of PersistentVolume %s back to %s", pv.Name, rec.OriginalReclaimPolicy)
	case src != nil && (lockedBy(src, r) || lockHolder(src) == "" && slices.Contains(src.Finalizers, Finalizer)):
		return undo(rec, ActionUnlockSource, "unlocking PersistentVolumeClaim %s/%s", src.Namespace, src.Name)
	}
	return rolledBack(rec, src != nil && src.DeletionTimestamp == nil)
}
