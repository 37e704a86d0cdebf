package plan

import (
	"fmt"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"

	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// snapshotOrder is the order of a snapshot transfer's forward steps. The
// external-snapshotter's CRDs make a content's source handles and its
// volumeSnapshotRef immutable, so the seed's "adjust the content's source"
// cannot be done: the target gets a pre-provisioned content of its own
// that names the same backend snapshot, and the old content is removed
// while it is Retain, so the backend snapshot is never deleted on the way.
var snapshotOrder = []Action{ActionBegin, ActionLockSource, ActionRetainSourceContent, ActionCreateTargetContent,
	ActionCreateTargetSnapshot, ActionDeleteSource, ActionDeleteSourceContent, ActionRestoreDeletionPolicy}

// snapshotHandle is the backend snapshot of a content, "" if not known
// yet.
func snapshotHandle(c *snapv1.VolumeSnapshotContent) string {
	if c.Spec.Source.SnapshotHandle != nil {
		return *c.Spec.Source.SnapshotHandle
	}
	if c.Status != nil && c.Status.SnapshotHandle != nil {
		return *c.Status.SnapshotHandle
	}
	return ""
}

// snapshotReady reports whether s is ready and bound to content.
func snapshotReady(s *snapv1.VolumeSnapshot, content string) bool {
	return s.Status != nil && s.Status.ReadyToUse != nil && *s.Status.ReadyToUse &&
		s.Status.BoundVolumeSnapshotContentName != nil && (content == "" || *s.Status.BoundVolumeSnapshotContentName == content)
}

// contentBoundTo reports whether content c names snapshot s as its own.
func contentBoundTo(c *snapv1.VolumeSnapshotContent, s *snapv1.VolumeSnapshot) bool {
	ref := c.Spec.VolumeSnapshotRef
	return ref.Namespace == s.Namespace && ref.Name == s.Name && (ref.UID == "" || ref.UID == s.UID)
}

// preflightSnapshot checks that a snapshot can be transferred, before
// anything changes; a refusal waits (the user can fix it) and changes
// nothing.
func preflightSnapshot(o *Observed) Step {
	r, src, content := o.Request, o.SourceSnapshot, o.SourceContent
	matched := transferv1alpha1.PhaseMatched
	targetNS := TargetNamespace(o)
	switch {
	case src == nil:
		return wait(matched, ReasonSourceNotFound, "VolumeSnapshot %s/%s not found", r.Namespace, r.Spec.Source.Name)
	case src.DeletionTimestamp != nil:
		return wait(matched, ReasonSourceDeleting, "VolumeSnapshot %s/%s is being deleted", r.Namespace, src.Name)
	case lockedByOther(src, r):
		return wait(matched, ReasonSourceLocked, "VolumeSnapshot %s/%s is being transferred by another StorageTransferRequest", r.Namespace, src.Name)
	case !snapshotReady(src, ""):
		return wait(matched, ReasonSourceNotReady, "VolumeSnapshot %s/%s is not readyToUse yet", r.Namespace, src.Name)
	case content == nil:
		return wait(matched, ReasonSourceNotReady, "the VolumeSnapshotContent %s of VolumeSnapshot %s/%s is not found", *src.Status.BoundVolumeSnapshotContentName, r.Namespace, src.Name)
	case !contentBoundTo(content, src):
		return wait(matched, ReasonBoundElsewhere, "VolumeSnapshotContent %s is bound to %s/%s, not to VolumeSnapshot %s/%s: the controller does not guess",
			content.Name, content.Spec.VolumeSnapshotRef.Namespace, content.Spec.VolumeSnapshotRef.Name, r.Namespace, src.Name)
	case snapshotHandle(content) == "":
		return wait(matched, ReasonSourceNotReady, "VolumeSnapshotContent %s has no snapshot handle yet", content.Name)
	case o.TargetSnapshot != nil:
		return wait(matched, ReasonTargetNameTaken, "a VolumeSnapshot %s/%s already exists: delete it or choose another spec.targetName", targetNS, r.Spec.TargetName)
	case o.TargetContent != nil && !ours(o.TargetContent, r):
		return wait(matched, ReasonTargetNameTaken, "a VolumeSnapshotContent %s that this transfer did not create already exists", o.TargetContent.Name)
	}
	rec := &transferv1alpha1.TransferRecord{
		Step:                   string(ActionBegin),
		SourceUID:              string(src.UID),
		SourceContentName:      content.Name,
		TargetContentName:      TargetContentName(r),
		OriginalDeletionPolicy: string(content.Spec.DeletionPolicy),
		SnapshotHandle:         snapshotHandle(content),
		Driver:                 content.Spec.Driver,
	}
	if src.Spec.VolumeSnapshotClassName != nil {
		rec.VolumeSnapshotClassName = *src.Spec.VolumeSnapshotClassName
	} else if content.Spec.VolumeSnapshotClassName != nil {
		rec.VolumeSnapshotClassName = *content.Spec.VolumeSnapshotClassName
	}
	return Step{Action: ActionBegin, Phase: transferv1alpha1.PhaseTransferring, Reason: ReasonTransferring,
		Message: "transfer of VolumeSnapshot " + r.Namespace + "/" + src.Name + " to " + targetNS + "/" + r.Spec.TargetName + " begins", Record: rec}
}

// forwardSnapshot is the next step of a snapshot transfer under way.
func forwardSnapshot(o *Observed) Step {
	r, rec := o.Request, o.Request.Status.Record
	src, content, tsnap, tcontent := o.SourceSnapshot, o.SourceContent, o.TargetSnapshot, o.TargetContent
	if src != nil && string(src.UID) != rec.SourceUID {
		src = nil // a new snapshot of the same name is not the one being transferred
	}
	// Once the source is gone (deleted by this transfer, or by its owner
	// meanwhile: its content is Retain or the record still names the
	// backend snapshot), the only way is forward.
	sourceGone := src == nil || src.DeletionTimestamp != nil || reached(snapshotOrder, rec.Step, ActionDeleteSource)
	if !sourceGone {
		if s, ok := withdrawn(o, src, "VolumeSnapshot"); ok {
			return s
		}
		switch {
		case content == nil && !reached(snapshotOrder, rec.Step, ActionDeleteSourceContent):
			return startRollback(rec, ReasonSourceChanged, "VolumeSnapshotContent %s is gone", rec.SourceContentName)
		case content != nil && snapshotHandle(content) != rec.SnapshotHandle:
			return startRollback(rec, ReasonSourceChanged, "VolumeSnapshotContent %s names another snapshot handle than recorded", content.Name)
		case tsnap != nil && !ours(tsnap, r):
			return startRollback(rec, ReasonTargetConflict, "a VolumeSnapshot %s/%s that this transfer did not create exists", tsnap.Namespace, tsnap.Name)
		case tcontent != nil && !ours(tcontent, r):
			return startRollback(rec, ReasonTargetConflict, "a VolumeSnapshotContent %s that this transfer did not create exists", tcontent.Name)
		}
		switch {
		case !lockedBy(src, r):
			return act(rec, ActionLockSource, "locking VolumeSnapshot %s/%s", r.Namespace, src.Name)
		case content.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentRetain:
			return act(rec, ActionRetainSourceContent, "setting the deletionPolicy of VolumeSnapshotContent %s to Retain", content.Name)
		case tcontent == nil:
			return act(rec, ActionCreateTargetContent, "creating VolumeSnapshotContent %s for the same backend snapshot", rec.TargetContentName)
		case tsnap == nil:
			return act(rec, ActionCreateTargetSnapshot, "creating VolumeSnapshot %s/%s", TargetNamespace(o), r.Spec.TargetName)
		case tsnap.Status != nil && tsnap.Status.Error != nil && tsnap.Status.Error.Message != nil:
			return wait(transferv1alpha1.PhaseTransferring, ReasonWaitingForTarget, "VolumeSnapshot %s/%s reports an error: %s", tsnap.Namespace, tsnap.Name, *tsnap.Status.Error.Message)
		case !snapshotReady(tsnap, rec.TargetContentName):
			return wait(transferv1alpha1.PhaseTransferring, ReasonWaitingForTarget, "waiting for VolumeSnapshot %s/%s to be bound to %s and readyToUse", tsnap.Namespace, tsnap.Name, rec.TargetContentName)
		}
		return act(rec, ActionDeleteSource, "deleting VolumeSnapshot %s/%s (its content is Retain: the backend snapshot stays)", r.Namespace, src.Name)
	}
	// Past the point of no return: every step below still checks the
	// world, and stops with a condition rather than guess.
	switch {
	case content == nil && tcontent == nil && !reached(snapshotOrder, rec.Step, ActionCreateTargetContent):
		return Step{Action: ActionFail, Phase: transferv1alpha1.PhaseFailed, Reason: ReasonSourceDeletedBefore,
			Message: fmt.Sprintf("VolumeSnapshot %s/%s and its content were deleted before the transfer had retained them; nothing was transferred", r.Namespace, r.Spec.Source.Name)}
	case !reached(snapshotOrder, rec.Step, ActionRetainSourceContent):
		// Its owner deleted the source before this transfer had asked
		// for its content to be retained: the snapshot controller deletes
		// the content (and, under Delete, the backend snapshot) as asked.
		// Retaining it now would race that deletion, and a target made
		// from a backend snapshot being deleted would never be ready.
		return Step{Action: ActionFail, Phase: transferv1alpha1.PhaseFailed, Reason: ReasonSourceDeletedBefore,
			Message: fmt.Sprintf("VolumeSnapshot %s/%s was deleted before the transfer had retained its content; nothing was transferred, the content is left to its deletionPolicy", r.Namespace, r.Spec.Source.Name)}
	case tcontent != nil && !ours(tcontent, r):
		return wait(transferv1alpha1.PhaseTransferring, ReasonNeedsAttention, "VolumeSnapshotContent %s was not created by this transfer: remove it, the transfer then re-creates it", tcontent.Name)
	case tsnap != nil && !ours(tsnap, r):
		return wait(transferv1alpha1.PhaseTransferring, ReasonNeedsAttention, "VolumeSnapshot %s/%s was not created by this transfer: remove it, the transfer then re-creates it", tsnap.Namespace, tsnap.Name)
	case src != nil && src.DeletionTimestamp == nil:
		return act(rec, ActionDeleteSource, "deleting VolumeSnapshot %s/%s (its content is Retain: the backend snapshot stays)", r.Namespace, src.Name)
	case content != nil && content.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentRetain:
		return act(rec, ActionRetainSourceContent, "setting the deletionPolicy of VolumeSnapshotContent %s to Retain", content.Name)
	case tcontent == nil:
		return act(rec, ActionCreateTargetContent, "creating VolumeSnapshotContent %s for the same backend snapshot", rec.TargetContentName)
	case tsnap == nil:
		return act(rec, ActionCreateTargetSnapshot, "creating VolumeSnapshot %s/%s", TargetNamespace(o), r.Spec.TargetName)
	case src != nil:
		return wait(transferv1alpha1.PhaseTransferring, ReasonTransferring, "waiting for VolumeSnapshot %s/%s to be deleted", r.Namespace, src.Name)
	case content != nil && content.DeletionTimestamp == nil:
		return act(rec, ActionDeleteSourceContent, "deleting VolumeSnapshotContent %s (Retain: the backend snapshot stays)", content.Name)
	case content != nil:
		return wait(transferv1alpha1.PhaseTransferring, ReasonTransferring, "waiting for VolumeSnapshotContent %s to be deleted", content.Name)
	case !snapshotReady(tsnap, rec.TargetContentName):
		return wait(transferv1alpha1.PhaseTransferring, ReasonWaitingForTarget, "waiting for VolumeSnapshot %s/%s to be bound to %s and readyToUse", tsnap.Namespace, tsnap.Name, rec.TargetContentName)
	case string(tcontent.Spec.DeletionPolicy) != rec.OriginalDeletionPolicy:
		return act(rec, ActionRestoreDeletionPolicy, "setting the deletionPolicy of VolumeSnapshotContent %s to %s", tcontent.Name, rec.OriginalDeletionPolicy)
	}
	return complete(o, transferv1alpha1.KindVolumeSnapshot)
}

// rollbackSnapshot undoes a snapshot transfer that has not deleted its
// source: the target objects (Retain, so the backend snapshot stays), then
// the source content's policy and the lock, each only if this transfer
// made it.
func rollbackSnapshot(o *Observed) Step {
	r, rec := o.Request, o.Request.Status.Record
	src, content, tsnap, tcontent := o.SourceSnapshot, o.SourceContent, o.TargetSnapshot, o.TargetContent
	if src != nil && string(src.UID) != rec.SourceUID {
		src = nil
	}
	switch {
	case tcontent != nil && ours(tcontent, r) && tcontent.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentRetain:
		// Checked before the target snapshot is deleted too: the snapshot
		// controller would delete a content that is not Retain with it,
		// and the backend snapshot the source still names.
		return wait(transferv1alpha1.PhaseTransferring, ReasonNeedsAttention, "%s; rolling back: VolumeSnapshotContent %s is not Retain, the controller will not delete it nor its VolumeSnapshot", rec.RollbackMessage, tcontent.Name)
	case tsnap != nil && ours(tsnap, r) && tsnap.DeletionTimestamp == nil:
		return undo(rec, ActionDeleteTargetSnapshot, "deleting VolumeSnapshot %s/%s", tsnap.Namespace, tsnap.Name)
	case tsnap != nil && ours(tsnap, r):
		return wait(transferv1alpha1.PhaseTransferring, ReasonRollingBack, "%s; rolling back: waiting for VolumeSnapshot %s/%s to be deleted", rec.RollbackMessage, tsnap.Namespace, tsnap.Name)
	case tcontent != nil && ours(tcontent, r) && tcontent.DeletionTimestamp == nil:
		return undo(rec, ActionDeleteTargetContent, "deleting VolumeSnapshotContent %s (Retain: the backend snapshot stays)", tcontent.Name)
	case tcontent != nil && ours(tcontent, r):
		return wait(transferv1alpha1.PhaseTransferring, ReasonRollingBack, "%s; rolling back: waiting for VolumeSnapshotContent %s to be deleted", rec.RollbackMessage, tcontent.Name)
	case src != nil && lockedBy(src, r) && content != nil && string(content.Spec.DeletionPolicy) != rec.OriginalDeletionPolicy:
		return undo(rec, ActionRestoreSourceDeletionPolicy, "setting the deletionPolicy of VolumeSnapshotContent %s back to %s", content.Name, rec.OriginalDeletionPolicy)
	case src != nil && lockedBy(src, r):
		return undo(rec, ActionUnlockSource, "unlocking VolumeSnapshot %s/%s", src.Namespace, src.Name)
	}
	return rolledBack(rec)
}
