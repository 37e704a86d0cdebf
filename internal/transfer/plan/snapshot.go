package plan

import (
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"

	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// A snapshot transfer cannot change the source content: the
// external-snapshotter's CRDs make a content's source handles and its
// volumeSnapshotRef immutable. The target gets a pre-provisioned content of
// its own that names the same backend snapshot, and the old content is
// removed while it is Retain, so the backend snapshot is never deleted on
// the way.

// The annotations with which the external-snapshotter finds the secret to
// delete a pre-provisioned content's snapshot and allows a restore to
// another volume mode.
const (
	DeletionSecretNameAnnotation      = "snapshot.storage.kubernetes.io/deletion-secret-name"
	DeletionSecretNamespaceAnnotation = "snapshot.storage.kubernetes.io/deletion-secret-namespace"
	AllowVolumeModeChangeAnnotation   = "snapshot.storage.kubernetes.io/allow-volume-mode-change"
	// SnapshotterSecretType is the type of a request's spec.secrets
	// entry that names the deletion secret.
	SnapshotterSecretType = "csi.storage.k8s.io/snapshotter-secret-name"
)

// sourceDeletionSecret is the deletion secret (namespace/name) the source
// content names, else the one of the request's spec.secrets, "" if none.
func sourceDeletionSecret(r *transferv1alpha1.StorageTransferRequest, c *snapv1.VolumeSnapshotContent) string {
	if name := c.Annotations[DeletionSecretNameAnnotation]; name != "" {
		return c.Annotations[DeletionSecretNamespaceAnnotation] + "/" + name
	}
	for _, s := range r.Spec.Secrets {
		if s.Type == SnapshotterSecretType {
			return s.Namespace + "/" + s.Name
		}
	}
	return ""
}

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
	case src.Status != nil && src.Status.VolumeGroupSnapshotName != nil:
		return wait(matched, ReasonGroupMember, "VolumeSnapshot %s/%s is a member of VolumeGroupSnapshot %s: it cannot be deleted alone, so it cannot be transferred", r.Namespace, src.Name, *src.Status.VolumeGroupSnapshotName)
	case !snapshotReady(src, ""):
		return wait(matched, ReasonSourceNotReady, "VolumeSnapshot %s/%s is not readyToUse yet", r.Namespace, src.Name)
	case content == nil:
		return wait(matched, ReasonSourceNotReady, "the VolumeSnapshotContent %s of VolumeSnapshot %s/%s is not found", *src.Status.BoundVolumeSnapshotContentName, r.Namespace, src.Name)
	case !contentBoundTo(content, src):
		return wait(matched, ReasonBoundElsewhere, "VolumeSnapshotContent %s is bound to %s/%s, not to VolumeSnapshot %s/%s: the controller does not guess",
			content.Name, content.Spec.VolumeSnapshotRef.Namespace, content.Spec.VolumeSnapshotRef.Name, r.Namespace, src.Name)
	case snapshotHandle(content) == "":
		return wait(matched, ReasonSourceNotReady, "VolumeSnapshotContent %s has no snapshot handle yet", content.Name)
	case content.Status != nil && content.Status.VolumeGroupSnapshotHandle != nil:
		return wait(matched, ReasonGroupMember, "VolumeSnapshotContent %s is a member of a group snapshot: it cannot be deleted alone, so it cannot be transferred", content.Name)
	case o.TargetSnapshot != nil:
		return wait(matched, ReasonTargetNameTaken, "a VolumeSnapshot %s/%s already exists: delete it or choose another spec.targetName", targetNS, r.Spec.TargetName)
	case o.TargetContent != nil && !ours(o.TargetContent, r):
		return wait(matched, ReasonTargetNameTaken, "a VolumeSnapshotContent %s that this transfer did not create already exists", o.TargetContent.Name)
	case tooLarge(o) != "":
		return wait(matched, ReasonTooLarge, "%s", tooLarge(o))
	case sourceDeletionSecret(r, content) != "" && o.Match.Accept.Spec.DeletionSecretName == "":
		return wait(matched, ReasonDeletionSecretNeeded, "the backend snapshot needs a deletion secret (the source's is %s): StorageTransferAccept %s/%s must name a Secret of its namespace in spec.deletionSecretName",
			sourceDeletionSecret(r, content), o.Match.Accept.Namespace, o.Match.Accept.Name)
	}
	rec := &transferv1alpha1.TransferRecord{
		Step:                   string(ActionBegin),
		SourceUID:              string(src.UID),
		SourceContentName:      content.Name,
		TargetContentName:      TargetContentName(r),
		OriginalDeletionPolicy: string(content.Spec.DeletionPolicy),
		SnapshotHandle:         snapshotHandle(content),
		Driver:                 content.Spec.Driver,
		SourceVolumeMode:       content.Spec.SourceVolumeMode,
		AllowVolumeModeChange:  content.Annotations[AllowVolumeModeChangeAnnotation],
		SourceDeletionSecret:   sourceDeletionSecret(r, content),
	}
	if name := o.Match.Accept.Spec.DeletionSecretName; name != "" {
		rec.TargetDeletionSecret = o.Match.Accept.Namespace + "/" + name
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
	rec := o.Request.Status.Record
	src := o.SourceSnapshot
	if src != nil && string(src.UID) != rec.SourceUID {
		src = nil // a new snapshot of the same name is not the one being transferred
	}
	switch {
	case rec.Returning:
		return returnSnapshot(o, src)
	case src != nil && src.DeletionTimestamp == nil:
		// Intact: not past the point of no return, whatever the record
		// says (see forwardClaim).
		return prepareSnapshot(o, src)
	case rec.PointOfNoReturn:
		return handOverSnapshot(o, src)
	}
	// Its owner deleted the source before the point of no return.
	if s, ok := withdrawnWhileDeleted(o); ok {
		return s
	}
	if c := o.SourceContent; c == nil || c.DeletionTimestamp != nil || c.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentRetain || !lockedBy(c, o.Request) {
		// Decided on the content as observed, not on the recorded step:
		// unless this transfer retained it (its lock is on it), the
		// snapshot controller deletes it (and, under Delete, the backend
		// snapshot) as its owner asked, or another transfer holds it; a
		// target on that backend snapshot would name deleted data, or
		// data handed to someone else.
		r := o.Request
		return startRollback(rec, ReasonSourceDeletedBefore, "VolumeSnapshot %s/%s was deleted before the transfer had retained its content", r.Namespace, r.Spec.Source.Name)
	}
	// Its content Retain: the transfer hands it over as agreed.
	return handOverSnapshot(o, src)
}

// prepareSnapshot is a step before the point of no return, with the source
// there: lock it, retain its content, create the target content and
// snapshot, then delete the source.
func prepareSnapshot(o *Observed, src *snapv1.VolumeSnapshot) Step {
	r, rec := o.Request, o.Request.Status.Record
	content, tsnap, tcontent := o.SourceContent, o.TargetSnapshot, o.TargetContent
	if s, ok := withdrawn(o, src, "VolumeSnapshot"); ok {
		return s
	}
	switch {
	case content == nil:
		return startRollback(rec, ReasonSourceChanged, "VolumeSnapshotContent %s is gone", rec.SourceContentName)
	case snapshotHandle(content) != rec.SnapshotHandle:
		return startRollback(rec, ReasonSourceChanged, "VolumeSnapshotContent %s names another snapshot handle than recorded", content.Name)
	case tsnap != nil && !targetSnapshotOurs(tsnap, r):
		return startRollback(rec, ReasonTargetConflict, "a VolumeSnapshot %s/%s that this transfer did not create exists", tsnap.Namespace, tsnap.Name)
	case tcontent != nil && !ours(tcontent, r):
		return startRollback(rec, ReasonTargetConflict, "a VolumeSnapshotContent %s that this transfer did not create exists", tcontent.Name)
	case tsnap != nil && tsnap.DeletionTimestamp != nil || tsnap == nil && boundToTarget(tcontent):
		// Its owner deleted the target snapshot: the content stays bound
		// to it (its UID), so no new one would ever bind.
		return startRollback(rec, ReasonTargetConflict, "VolumeSnapshot %s/%s, created by this transfer, was deleted", TargetNamespace(o), r.Spec.TargetName)
	case !lockedBy(src, r):
		return act(rec, ActionLockSource, "locking VolumeSnapshot %s/%s", r.Namespace, src.Name)
	case content.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentRetain || !lockedBy(content, r):
		return act(rec, ActionRetainSourceContent, "setting the deletionPolicy of VolumeSnapshotContent %s to Retain", content.Name)
	}
	// The target content and VolumeSnapshot are created after the
	// source's deletion, not before: until the point of no return nothing
	// in the target namespace can be restored from (nor bound to a content
	// naming the backend snapshot), so a target that withdraws keeps no
	// copy. The controller has the target namespace admit the snapshot
	// first (a server-side dry run of its creation, before this step's
	// record): refused, the transfer waits with the source intact
	// (Refused).
	s := commit(rec, ActionDeleteSource, "deleting VolumeSnapshot %s/%s (its content is Retain: the backend snapshot stays)", r.Namespace, src.Name)
	s.Admit = tsnap == nil
	return s
}

// targetSnapshotOurs reports whether s is the target snapshot this
// transfer created: its annotation names the request (which anyone who
// sees an object the transfer made can copy) and it names the transfer's
// content.
func targetSnapshotOurs(s *snapv1.VolumeSnapshot, r *transferv1alpha1.StorageTransferRequest) bool {
	rec := r.Status.Record
	return ours(s, r) && rec != nil && s.Spec.Source.VolumeSnapshotContentName != nil && *s.Spec.Source.VolumeSnapshotContentName == rec.TargetContentName
}

// boundToTarget reports whether a pre-provisioned content this transfer
// made has been bound to its snapshot.
func boundToTarget(tcontent *snapv1.VolumeSnapshotContent) bool {
	return tcontent != nil && tcontent.Spec.VolumeSnapshotRef.UID != ""
}

// handOverSnapshot is a step past the point of no return: the source
// deleted, the old content removed (Retain), the target content's policy
// restored. The target content's policy restored is the hand-over: a
// target that is refused, taken, or deleted before then gives the snapshot
// back (returnSnapshot); one deleted after it goes as that policy says.
func handOverSnapshot(o *Observed, src *snapv1.VolumeSnapshot) Step {
	r, rec := o.Request, o.Request.Status.Record
	content, tsnap, tcontent := o.SourceContent, o.TargetSnapshot, o.TargetContent
	transferring := transferv1alpha1.PhaseTransferring
	bound := boundToTarget(tcontent) && ours(tcontent, r)
	if rec.HandedOver {
		if tcontent != nil && ours(tcontent, r) && tcontent.DeletionTimestamp == nil && string(tcontent.Spec.DeletionPolicy) != rec.OriginalDeletionPolicy {
			return handOver(commit(rec, ActionRestoreDeletionPolicy, "setting the deletionPolicy of VolumeSnapshotContent %s to %s", tcontent.Name, rec.OriginalDeletionPolicy))
		}
		return complete(o, transferv1alpha1.KindVolumeSnapshot)
	}
	switch {
	case src != nil && src.DeletionTimestamp == nil:
		return commit(rec, ActionDeleteSource, "deleting VolumeSnapshot %s/%s (its content is Retain: the backend snapshot stays)", r.Namespace, src.Name)
	case content != nil && content.DeletionTimestamp == nil && content.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentRetain:
		return commit(rec, ActionRetainSourceContent, "setting the deletionPolicy of VolumeSnapshotContent %s to Retain", content.Name)
	case tcontent != nil && !ours(tcontent, r):
		return startReturn(rec, "VolumeSnapshotContent %s was not created by this transfer", tcontent.Name)
	case o.Match.Accept == nil && !(bound && tsnap != nil && targetSnapshotOurs(tsnap, r) && tsnap.DeletionTimestamp == nil):
		return startReturn(rec, "the StorageTransferAccept was deleted before the snapshot was handed over")
	case tsnap != nil && !targetSnapshotOurs(tsnap, r):
		return startReturn(rec, "the name %s/%s was taken by a VolumeSnapshot this transfer did not create", tsnap.Namespace, tsnap.Name)
	case tsnap != nil && tsnap.DeletionTimestamp != nil || tsnap == nil && bound:
		return startReturn(rec, "VolumeSnapshot %s/%s was deleted before the transfer completed", TargetNamespace(o), r.Spec.TargetName)
	case tcontent != nil && tcontent.DeletionTimestamp != nil:
		return wait(transferring, ReasonNeedsAttention, "VolumeSnapshotContent %s, which names the backend snapshot, is being deleted", tcontent.Name)
	case tcontent == nil:
		return commit(rec, ActionCreateTargetContent, "creating VolumeSnapshotContent %s for the same backend snapshot", rec.TargetContentName)
	case tsnap == nil:
		return commit(rec, ActionCreateTargetSnapshot, "creating VolumeSnapshot %s/%s", TargetNamespace(o), r.Spec.TargetName)
	case tsnap.Status != nil && tsnap.Status.Error != nil && tsnap.Status.Error.Message != nil:
		return wait(transferring, ReasonNeedsAttention, "VolumeSnapshot %s/%s reports an error: %s; the old VolumeSnapshotContent %s is kept (Retain) until it is ready",
			tsnap.Namespace, tsnap.Name, *tsnap.Status.Error.Message, rec.SourceContentName)
	case !snapshotReady(tsnap, rec.TargetContentName):
		// Ready before the old content goes: until then the backend
		// snapshot is named by a content nobody can delete it through.
		return wait(transferring, ReasonWaitingForTarget, "waiting for VolumeSnapshot %s/%s to be bound to %s and readyToUse", tsnap.Namespace, tsnap.Name, rec.TargetContentName)
	case src != nil:
		return wait(transferring, ReasonTransferring, "waiting for VolumeSnapshot %s/%s to be deleted", r.Namespace, src.Name)
	case content != nil && content.DeletionTimestamp == nil:
		return commit(rec, ActionDeleteSourceContent, "deleting VolumeSnapshotContent %s (Retain: the backend snapshot stays)", content.Name)
	case content != nil:
		return wait(transferring, ReasonTransferring, "waiting for VolumeSnapshotContent %s to be deleted", content.Name)
	}
	return handOver(commit(rec, ActionRestoreDeletionPolicy, "setting the deletionPolicy of VolumeSnapshotContent %s to %s", tcontent.Name, rec.OriginalDeletionPolicy))
}

// returnSnapshot gives the backend snapshot back to the source namespace,
// under the source snapshot's name, after the target refused it: a new
// pre-provisioned content and snapshot there, then the target's objects
// and the old content removed while they are Retain.
func returnSnapshot(o *Observed, src *snapv1.VolumeSnapshot) Step {
	r, rec := o.Request, o.Request.Status.Record
	content, tsnap, tcontent, rcontent := o.SourceContent, o.TargetSnapshot, o.TargetContent, o.ReturnContent
	transferring := transferv1alpha1.PhaseTransferring
	back := o.SourceSnapshot
	if back != nil && (!ours(back, r) || string(back.UID) == rec.SourceUID) {
		back = nil
	}
	rname := ReturnContentName(r)
	if rcontent != nil && !ours(rcontent, r) {
		return wait(transferring, ReasonNeedsAttention, "%s; VolumeSnapshotContent %s was not created by this transfer", rec.ReturnMessage, rname)
	}
	mine := func(c *snapv1.VolumeSnapshotContent) bool {
		return c != nil && ours(c, r) && c.DeletionTimestamp == nil
	}
	if rec.HandedOver {
		// Given back: its owner owns it (and may have deleted it since,
		// as its policy says); nothing is made again. The policy's
		// restoring was recorded before it was written: written again if
		// the controller stopped in between.
		if rcontent != nil && rcontent.DeletionTimestamp == nil && string(rcontent.Spec.DeletionPolicy) != rec.OriginalDeletionPolicy {
			return giveBack(rec, ActionRestoreDeletionPolicy, "setting the deletionPolicy of VolumeSnapshotContent %s to %s", rname, rec.OriginalDeletionPolicy)
		}
		if back != nil && lockedBy(back, r) {
			return giveBack(rec, ActionUnlockSource, "unlocking VolumeSnapshot %s/%s", back.Namespace, back.Name)
		}
		return returned(o, transferv1alpha1.KindVolumeSnapshot)
	}
	switch {
	case mine(tcontent) && tcontent.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentRetain:
		return wait(transferring, ReasonNeedsAttention, "%s; VolumeSnapshotContent %s is not Retain, the controller will not delete it nor its VolumeSnapshot", rec.ReturnMessage, tcontent.Name)
	case tsnap != nil && targetSnapshotOurs(tsnap, r) && tsnap.DeletionTimestamp == nil:
		return giveBack(rec, ActionDeleteTargetSnapshot, "deleting VolumeSnapshot %s/%s", tsnap.Namespace, tsnap.Name)
	case tsnap != nil && targetSnapshotOurs(tsnap, r):
		return wait(transferring, ReasonTargetRefused, "%s; waiting for VolumeSnapshot %s/%s to be deleted", rec.ReturnMessage, tsnap.Namespace, tsnap.Name)
	case src != nil:
		return wait(transferring, ReasonTargetRefused, "%s; waiting for the deleted VolumeSnapshot %s/%s to go", rec.ReturnMessage, src.Namespace, src.Name)
	case o.SourceSnapshot != nil && back == nil:
		return wait(transferring, ReasonNeedsAttention, "%s; a new VolumeSnapshot %s/%s exists, so the snapshot cannot be given back under that name: "+
			"backend snapshot %s stays, named by a Retain VolumeSnapshotContent", rec.ReturnMessage, r.Namespace, r.Spec.Source.Name, rec.SnapshotHandle)
	case rcontent == nil:
		return giveBack(rec, ActionCreateReturnContent, "creating VolumeSnapshotContent %s for the same backend snapshot", rname)
	case back == nil && !boundToTarget(rcontent):
		return giveBack(rec, ActionReturnSource, "creating VolumeSnapshot %s/%s again, bound to VolumeSnapshotContent %s", r.Namespace, r.Spec.Source.Name, rname)
	case back != nil && back.DeletionTimestamp == nil && !snapshotReady(back, rname):
		return wait(transferring, ReasonTargetRefused, "%s; waiting for VolumeSnapshot %s/%s to be bound to %s and readyToUse", rec.ReturnMessage, r.Namespace, back.Name, rname)
	case mine(tcontent):
		return giveBack(rec, ActionDeleteTargetContent, "deleting VolumeSnapshotContent %s (Retain: the backend snapshot stays)", tcontent.Name)
	case content != nil && content.DeletionTimestamp == nil && content.Spec.DeletionPolicy == snapv1.VolumeSnapshotContentRetain:
		return giveBack(rec, ActionDeleteSourceContent, "deleting VolumeSnapshotContent %s (Retain: the backend snapshot stays)", content.Name)
	case tcontent != nil && ours(tcontent, r) || content != nil:
		return wait(transferring, ReasonTargetRefused, "%s; waiting for the old VolumeSnapshotContents to be deleted", rec.ReturnMessage)
	case string(rcontent.Spec.DeletionPolicy) != rec.OriginalDeletionPolicy:
		// Also when its owner deleted the snapshot given back: the
		// content then goes as that policy says.
		return handOver(giveBack(rec, ActionRestoreDeletionPolicy, "setting the deletionPolicy of VolumeSnapshotContent %s to %s", rname, rec.OriginalDeletionPolicy))
	case back != nil && lockedBy(back, r):
		return giveBack(rec, ActionUnlockSource, "unlocking VolumeSnapshot %s/%s", back.Namespace, back.Name)
	}
	return returned(o, transferv1alpha1.KindVolumeSnapshot)
}

// rollbackSnapshot undoes a snapshot transfer before its point of no
// return: the target objects (Retain, so the backend snapshot stays),
// then the source content's policy (also when its owner deleted the
// source meanwhile: the content then goes as its policy says) and the
// lock, each only if this transfer made it.
func rollbackSnapshot(o *Observed) Step {
	r, rec := o.Request, o.Request.Status.Record
	src, content, tsnap, tcontent := o.SourceSnapshot, o.SourceContent, o.TargetSnapshot, o.TargetContent
	if src != nil && string(src.UID) != rec.SourceUID {
		src = nil
	}
	ownsContent := content != nil && content.DeletionTimestamp == nil && lockedBy(content, r)
	switch {
	case tcontent != nil && ours(tcontent, r) && tcontent.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentRetain:
		// Checked before the target snapshot is deleted too: the snapshot
		// controller would delete a content that is not Retain with it,
		// and the backend snapshot the source still names.
		return wait(transferv1alpha1.PhaseTransferring, ReasonNeedsAttention, "%s; rolling back: VolumeSnapshotContent %s is not Retain, the controller will not delete it nor its VolumeSnapshot", rec.RollbackMessage, tcontent.Name)
	case tsnap != nil && targetSnapshotOurs(tsnap, r) && tsnap.DeletionTimestamp == nil:
		return undo(rec, ActionDeleteTargetSnapshot, "deleting VolumeSnapshot %s/%s", tsnap.Namespace, tsnap.Name)
	case tsnap != nil && targetSnapshotOurs(tsnap, r):
		return wait(transferv1alpha1.PhaseTransferring, ReasonRollingBack, "%s; rolling back: waiting for VolumeSnapshot %s/%s to be deleted", rec.RollbackMessage, tsnap.Namespace, tsnap.Name)
	case tcontent != nil && ours(tcontent, r) && tcontent.DeletionTimestamp == nil:
		return undo(rec, ActionDeleteTargetContent, "deleting VolumeSnapshotContent %s (Retain: the backend snapshot stays)", tcontent.Name)
	case tcontent != nil && ours(tcontent, r):
		return wait(transferv1alpha1.PhaseTransferring, ReasonRollingBack, "%s; rolling back: waiting for VolumeSnapshotContent %s to be deleted", rec.RollbackMessage, tcontent.Name)
	case ownsContent:
		return undo(rec, ActionRestoreSourceDeletionPolicy, "setting the deletionPolicy of VolumeSnapshotContent %s back to %s", content.Name, rec.OriginalDeletionPolicy)
	case src != nil && lockedBy(src, r):
		return undo(rec, ActionUnlockSource, "unlocking VolumeSnapshot %s/%s", src.Namespace, src.Name)
	}
	return rolledBack(rec, src != nil && src.DeletionTimestamp == nil)
}
