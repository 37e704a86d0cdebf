package plan

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// claimOrder is the order of a claim transfer's forward steps (the seed's,
// with the volume reserved for the target before the target claim exists,
// so no other claim can take it).
var claimOrder = []Action{ActionBegin, ActionLockSource, ActionRetainVolume, ActionDeleteSource, ActionReserveVolume,
	ActionCreateTargetClaim, ActionRestoreReclaimPolicy, ActionReleaseSource}

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
	case src.Status.Phase != v1.ClaimBound || src.Spec.VolumeName == "":
		return wait(matched, ReasonSourceNotReady, "PersistentVolumeClaim %s/%s is not bound yet", r.Namespace, src.Name)
	case pv == nil:
		return wait(matched, ReasonSourceNotReady, "PersistentVolume %s of PersistentVolumeClaim %s/%s is not found", src.Spec.VolumeName, r.Namespace, src.Name)
	case pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != src.UID:
		return wait(matched, ReasonBoundElsewhere, "PersistentVolume %s is not bound to PersistentVolumeClaim %s/%s: the controller does not guess", pv.Name, r.Namespace, src.Name)
	case o.TargetClaim != nil:
		return wait(matched, ReasonTargetNameTaken, "a PersistentVolumeClaim %s/%s already exists: delete it or choose another spec.targetName", TargetNamespace(o), r.Spec.TargetName)
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

// claimLocked reports whether r holds the lock and the finalizer of c.
func claimLocked(c *v1.PersistentVolumeClaim, r *transferv1alpha1.StorageTransferRequest) bool {
	return lockedBy(c, r) && slices.Contains(c.Finalizers, Finalizer)
}

// forwardClaim is the next step of a claim transfer under way.
func forwardClaim(o *Observed) Step {
	r, rec := o.Request, o.Request.Status.Record
	src, pv, target := o.SourceClaim, o.Volume, o.TargetClaim
	transferring := transferv1alpha1.PhaseTransferring
	if src != nil && string(src.UID) != rec.SourceUID {
		src = nil
	}
	targetNS := TargetNamespace(o)
	sourceGone := src == nil || src.DeletionTimestamp != nil || reached(claimOrder, rec.Step, ActionDeleteSource)
	if !sourceGone {
		if s, ok := withdrawn(o, src, "PersistentVolumeClaim"); ok {
			return s
		}
		switch {
		case pv == nil || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != src.UID:
			return startRollback(rec, ReasonSourceChanged, "PersistentVolume %s is no longer bound to PersistentVolumeClaim %s/%s", rec.VolumeName, r.Namespace, src.Name)
		case target != nil && !ours(target, r):
			return startRollback(rec, ReasonTargetConflict, "a PersistentVolumeClaim %s/%s that this transfer did not create exists", targetNS, r.Spec.TargetName)
		}
		switch {
		case !claimLocked(src, r):
			return act(rec, ActionLockSource, "locking PersistentVolumeClaim %s/%s", r.Namespace, src.Name)
		case pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimRetain:
			return act(rec, ActionRetainVolume, "setting the reclaim policy of PersistentVolume %s to Retain", pv.Name)
		case len(o.Pods) > 0:
			return wait(transferring, ReasonSourceInUse, "PersistentVolumeClaim %s/%s is used by pod %s: the transfer waits until no pod uses it", r.Namespace, src.Name, strings.Join(o.Pods, ", "))
		case resizing(src, pv):
			return wait(transferring, ReasonSourceNotReady, "PersistentVolumeClaim %s/%s asks for more than the capacity of PersistentVolume %s: the transfer waits until the resize has finished", r.Namespace, src.Name, pv.Name)
		}
		return deleteSourceClaim(rec, src)
	}
	switch {
	case !reached(claimOrder, rec.Step, ActionRetainVolume) && (src == nil || !slices.Contains(src.Finalizers, Finalizer)):
		// Its owner deleted the source before this transfer held it with
		// its finalizer: nothing keeps the volume bound, and the PV
		// controller reclaims it as its policy says. Retaining it now
		// would race that.
		return Step{Action: ActionFail, Phase: transferv1alpha1.PhaseFailed, Reason: ReasonSourceDeletedBefore,
			Message: fmt.Sprintf("PersistentVolumeClaim %s/%s was deleted before the transfer held it; nothing was transferred, its volume is left to its reclaim policy", r.Namespace, r.Spec.Source.Name)}
	case src != nil && src.DeletionTimestamp == nil && pv != nil && resizing(src, pv):
		return wait(transferring, ReasonSourceNotReady, "PersistentVolumeClaim %s/%s asks for more than the capacity of PersistentVolume %s: the transfer waits until the resize has finished", r.Namespace, src.Name, pv.Name)
	case src != nil && src.DeletionTimestamp == nil:
		return deleteSourceClaim(rec, src)
	case src != nil && len(src.Finalizers) > 1 || src != nil && !slices.Contains(src.Finalizers, Finalizer) && len(src.Finalizers) > 0:
		msg := "waiting for every pod using PersistentVolumeClaim %s/%s to stop (pvc-protection)"
		if len(o.Pods) > 0 {
			return wait(transferring, ReasonSourceInUse, msg+": %s", r.Namespace, src.Name, strings.Join(o.Pods, ", "))
		}
		return wait(transferring, ReasonSourceInUse, msg, r.Namespace, src.Name)
	case pv == nil:
		return wait(transferring, ReasonNeedsAttention, "PersistentVolume %s is gone", rec.VolumeName)
	}
	ref := pv.Spec.ClaimRef
	reserved := ref != nil && ref.Namespace == targetNS && ref.Name == r.Spec.TargetName
	switch {
	case !reserved && ref != nil && ref.UID != "" && string(ref.UID) != rec.SourceUID:
		return wait(transferring, ReasonBoundElsewhere, "PersistentVolume %s is bound to %s/%s, neither the source nor the target: the controller does not guess", pv.Name, ref.Namespace, ref.Name)
	case reserved && ref.UID != "" && (target == nil || ref.UID != target.UID):
		return wait(transferring, ReasonBoundElsewhere, "PersistentVolume %s is bound to another PersistentVolumeClaim %s/%s than this transfer created", pv.Name, ref.Namespace, ref.Name)
	case pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimRetain && !(target != nil && ours(target, r) && target.Status.Phase == v1.ClaimBound):
		return act(rec, ActionRetainVolume, "setting the reclaim policy of PersistentVolume %s to Retain", pv.Name)
	case !reserved:
		return act(rec, ActionReserveVolume, "reserving PersistentVolume %s for %s/%s", pv.Name, targetNS, r.Spec.TargetName)
	case target == nil && pv.Status.Phase != v1.VolumeAvailable:
		// The PV controller marks a volume reserved for a claim that
		// does not exist yet Available. Until it has, its cache may still
		// have the source's claimRef, and a target claim it saw then would
		// get a FailedBinding warning and wait for its next resync.
		return wait(transferring, ReasonWaitingForTarget, "waiting for the PV controller to see PersistentVolume %s reserved for %s/%s", pv.Name, targetNS, r.Spec.TargetName)
	case target == nil:
		return act(rec, ActionCreateTargetClaim, "creating PersistentVolumeClaim %s/%s", targetNS, r.Spec.TargetName)
	case !ours(target, r):
		return wait(transferring, ReasonNeedsAttention, "PersistentVolumeClaim %s/%s was not created by this transfer; the volume is reserved for that name: delete the claim, the transfer then creates its own", targetNS, r.Spec.TargetName)
	case target.Status.Phase != v1.ClaimBound:
		return wait(transferring, ReasonWaitingForTarget, "waiting for PersistentVolumeClaim %s/%s to be bound to %s", targetNS, r.Spec.TargetName, pv.Name)
	case pv.Spec.PersistentVolumeReclaimPolicy != rec.OriginalReclaimPolicy:
		return act(rec, ActionRestoreReclaimPolicy, "setting the reclaim policy of PersistentVolume %s back to %s", pv.Name, rec.OriginalReclaimPolicy)
	case src != nil:
		return act(rec, ActionReleaseSource, "removing the finalizer of the deleted PersistentVolumeClaim %s/%s", r.Namespace, src.Name)
	}
	return complete(o, transferv1alpha1.KindPersistentVolumeClaim)
}

// deleteSourceClaim is the point of no return of a claim transfer. Its
// record carries the claim's spec as it is now, not as it was when the
// transfer began: a claim resized meanwhile is created in the target
// namespace with its new size (the deletion is conditional on the
// claim's resourceVersion, so the spec recorded is the spec deleted).
func deleteSourceClaim(rec *transferv1alpha1.TransferRecord, src *v1.PersistentVolumeClaim) Step {
	s := act(rec, ActionDeleteSource, "deleting PersistentVolumeClaim %s/%s (its volume is Retain and the claim held by a finalizer)", src.Namespace, src.Name)
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

// rollbackClaim undoes a claim transfer that has not deleted its source:
// the reclaim policy, then the lock, each only if this transfer holds the
// lock.
func rollbackClaim(o *Observed) Step {
	r, rec := o.Request, o.Request.Status.Record
	src, pv := o.SourceClaim, o.Volume
	if src != nil && string(src.UID) != rec.SourceUID {
		src = nil
	}
	held := src != nil && (lockedBy(src, r) || slices.Contains(src.Finalizers, Finalizer))
	switch {
	case held && pv != nil && lockedBy(src, r) && pv.Spec.PersistentVolumeReclaimPolicy != rec.OriginalReclaimPolicy:
		return undo(rec, ActionRestoreReclaimPolicy, "setting the reclaim policy of PersistentVolume %s back to %s", pv.Name, rec.OriginalReclaimPolicy)
	case held:
		return undo(rec, ActionUnlockSource, "unlocking PersistentVolumeClaim %s/%s", src.Namespace, src.Name)
	}
	return rolledBack(rec)
}
