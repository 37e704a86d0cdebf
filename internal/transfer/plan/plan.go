// Package plan is the transfer controller's step planner: given what the
// controller observes of a StorageTransferRequest, its accept, the source
// object, the objects bound to it and the target objects, Next returns the
// one step to take next, with the write-ahead record to store in the
// request's status before the step changes anything. It does no I/O, so
// every state a crash can leave is a row of a table test.
//
// The steps are in docs/transfer.md. Every step is idempotent and checked
// against the world before it is taken: a controller restarted at any point
// observes what it did, plans again, and finishes or rolls back.
package plan

import (
	"fmt"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/transfer/match"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// Names the controller puts on objects.
const (
	// LockAnnotation on a source object holds the UID of the request that
	// transfers it: two transfers cannot take the same object.
	LockAnnotation = "transfer.xns-csi.io/lock"
	// RequestAnnotation on an object the controller created holds the UID
	// of the request it was created for, so a retried step finds its own
	// object and never takes another's.
	RequestAnnotation = "transfer.xns-csi.io/request"
	// Finalizer holds a request until its transfer has finished or rolled
	// back, and a source claim until the volume is bound to the target.
	Finalizer = "transfer.xns-csi.io/transfer"
)

// Action is what the controller does in a step.
type Action string

// The actions. ActionNone changes nothing but the request's status.
const (
	ActionNone Action = "None"
	// ActionBegin adds Finalizer to the request and writes the first
	// record.
	ActionBegin Action = "Begin"
	// ActionLockSource sets LockAnnotation on the source (and, for a
	// claim, Finalizer), refusing if another request holds it.
	ActionLockSource Action = "LockSource"

	// ActionRetainSourceContent sets the source content's deletionPolicy
	// to Retain.
	ActionRetainSourceContent Action = "RetainSourceContent"
	// ActionCreateTargetContent creates the pre-provisioned content
	// TargetContentName with the source's snapshotHandle, Retain.
	ActionCreateTargetContent Action = "CreateTargetContent"
	// ActionCreateTargetSnapshot creates the target VolumeSnapshot bound
	// to the target content.
	ActionCreateTargetSnapshot Action = "CreateTargetSnapshot"
	// ActionDeleteSource deletes the source object: the point of no return.
	ActionDeleteSource Action = "DeleteSource"
	// ActionDeleteSourceContent deletes the old content (Retain: the
	// backend snapshot stays).
	ActionDeleteSourceContent Action = "DeleteSourceContent"
	// ActionRestoreDeletionPolicy sets the target content's deletionPolicy
	// to the original.
	ActionRestoreDeletionPolicy Action = "RestoreDeletionPolicy"

	// ActionRetainVolume sets the PV's reclaim policy to Retain.
	ActionRetainVolume Action = "RetainVolume"
	// ActionReserveVolume sets the PV's claimRef to the target claim's
	// namespace and name, without UID, before that claim exists.
	ActionReserveVolume Action = "ReserveVolume"
	// ActionCreateTargetClaim creates the target claim from the recorded
	// spec, with spec.volumeName.
	ActionCreateTargetClaim Action = "CreateTargetClaim"
	// ActionRestoreReclaimPolicy sets the PV's reclaim policy to the
	// original.
	ActionRestoreReclaimPolicy Action = "RestoreReclaimPolicy"
	// ActionReleaseSource removes Finalizer from the deleted source claim.
	ActionReleaseSource Action = "ReleaseSource"

	// ActionStartReturn records that the target refused the object after
	// the point of no return: it is given back to the source namespace.
	ActionStartReturn Action = "StartReturn"
	// ActionCreateReturnContent creates ReturnContentName, a
	// pre-provisioned content for the returned snapshot.
	ActionCreateReturnContent Action = "CreateReturnContent"
	// ActionReturnSource creates the source object again, under its name,
	// on the same volume or backend snapshot.
	ActionReturnSource Action = "ReturnSource"
	// ActionReserveVolumeForSource sets the PV's claimRef to the returned
	// claim.
	ActionReserveVolumeForSource Action = "ReserveVolumeForSource"

	// ActionStartRollback records that the transfer is being undone.
	ActionStartRollback Action = "StartRollback"
	// ActionDeleteTargetSnapshot, ActionDeleteTargetContent undo
	// ActionCreateTargetSnapshot and ActionCreateTargetContent.
	ActionDeleteTargetSnapshot Action = "DeleteTargetSnapshot"
	ActionDeleteTargetContent  Action = "DeleteTargetContent"
	// ActionDeleteTargetClaim deletes the target claim this transfer
	// created and the volume is not bound to.
	ActionDeleteTargetClaim Action = "DeleteTargetClaim"
	// ActionRestoreSourceDeletionPolicy undoes ActionRetainSourceContent.
	ActionRestoreSourceDeletionPolicy Action = "RestoreSourceDeletionPolicy"
	// ActionUnlockSource undoes ActionLockSource.
	ActionUnlockSource Action = "UnlockSource"

	// ActionComplete and ActionFail end the transfer: the phase is set and
	// Finalizer removed from the request.
	ActionComplete Action = "Complete"
	ActionFail     Action = "Fail"
)

// The reasons of the Transferred condition.
const (
	ReasonWaitingForMatch     = "WaitingForMatch"
	ReasonSourceNotFound      = "SourceNotFound"
	ReasonSourceDeleting      = "SourceDeleting"
	ReasonSourceNotReady      = "SourceNotReady"
	ReasonSourceLocked        = "SourceLockedByAnotherTransfer"
	ReasonSourceInUse         = "SourceInUse"
	ReasonTargetNameTaken     = "TargetNameTaken"
	ReasonBoundElsewhere      = "BoundToUnexpectedObject"
	ReasonTransferring        = "Transferring"
	ReasonWaitingForTarget    = "WaitingForTarget"
	ReasonCompleted           = "Completed"
	ReasonRollingBack         = "RollingBack"
	ReasonRequestDeleted      = "RequestDeleted"
	ReasonAcceptDeleted       = "AcceptDeleted"
	ReasonTargetConflict      = "TargetConflict"
	ReasonSourceChanged       = "SourceChanged"
	ReasonUnsupportedKind     = "UnsupportedKind"
	ReasonNeedsAttention      = "NeedsAttention"
	ReasonSourceDeletedBefore = "SourceDeletedBeforeTransfer"
	ReasonGroupMember         = "SourceInVolumeGroupSnapshot"
	ReasonEphemeral           = "SourceIsEphemeral"
	// ReasonSecretNotAllowed: the request names a secret of another
	// namespace than its own.
	ReasonSecretNotAllowed = "SecretNotAllowed"
	// ReasonDeletionSecretNeeded: the backend snapshot needs a deletion
	// secret and the accept names none of its namespace.
	ReasonDeletionSecretNeeded = "DeletionSecretNeeded"
	// ReasonTooLarge: the source is larger than the accept's
	// spec.expect.maxSize.
	ReasonTooLarge = "LargerThanAccepted"
	// ReasonTargetRefused: the target namespace refused to create the
	// target object (quota, LimitRange, a policy, terminating or gone).
	ReasonTargetRefused = "TargetRefused"
	// ReasonReturned ends a transfer whose target refused the object
	// after the point of no return: the object was given back.
	ReasonReturned = "ReturnedToSource"
	// ReasonReturnRefused: giving the object back was refused too (the
	// source namespace terminating or gone, its quota): the volume or
	// backend snapshot is kept Retain and a person decides.
	ReasonReturnRefused = "ReturnRefused"
)

// Observed is what the controller read from its caches for one request.
// Objects that do not exist are nil.
type Observed struct {
	Request *transferv1alpha1.StorageTransferRequest
	// Match is the matching decision for the request (match.Decide).
	Match match.Result

	// For a VolumeSnapshot: the source and its content (the one the
	// record names, else the one the source is bound to), and the target
	// snapshot and TargetContentName.
	SourceSnapshot *snapv1.VolumeSnapshot
	SourceContent  *snapv1.VolumeSnapshotContent
	TargetSnapshot *snapv1.VolumeSnapshot
	TargetContent  *snapv1.VolumeSnapshotContent
	// ReturnContent is ReturnContentName, once a return has created it.
	ReturnContent *snapv1.VolumeSnapshotContent

	// For a PersistentVolumeClaim: the source claim, its volume (the one
	// the record names, else the one the claim is bound to), the target
	// claim, and the pods that use the source claim and have not ended.
	SourceClaim *v1.PersistentVolumeClaim
	Volume      *v1.PersistentVolume
	TargetClaim *v1.PersistentVolumeClaim
	Pods        []string

	// LockHolderExists reports whether the lock on the source names
	// another request that exists. A lock naming no request (written by
	// hand, or left by a request deleted by force) holds nothing: a
	// rollback then restores what this transfer changed.
	LockHolderExists bool
}

// Step is the next step of a transfer.
type Step struct {
	Action Action
	// Phase, Reason and Message are the request's phase and Transferred
	// condition once the step is taken.
	Phase   transferv1alpha1.Phase
	Reason  string
	Message string
	// Record is the write-ahead record to store before the action: nil
	// keeps the current one.
	Record *transferv1alpha1.TransferRecord
	// Admit asks the controller to have the target namespace admit the
	// target object (a server-side dry run of its creation) before the
	// record is written and the step taken; refused, the step that
	// follows is Refused's.
	Admit bool
}

// TargetContentName is the deterministic name of the content a snapshot
// transfer creates: a retried step finds it.
func TargetContentName(r *transferv1alpha1.StorageTransferRequest) string {
	return "snapcontent-transfer-" + string(r.UID)
}

// ReturnContentName is the deterministic name of the content a snapshot
// transfer creates to give the snapshot back to the source namespace.
func ReturnContentName(r *transferv1alpha1.StorageTransferRequest) string {
	return "snapcontent-return-" + string(r.UID)
}

// TargetNamespace is where the request's object goes: the namespace of the
// accept it matched.
func TargetNamespace(o *Observed) string {
	if o.Request.Status.TargetNamespace != "" {
		return o.Request.Status.TargetNamespace
	}
	if o.Match.Accept != nil {
		return o.Match.Accept.Namespace
	}
	return ""
}

// Next returns the next step of o.Request's transfer.
func Next(o *Observed) Step {
	r := o.Request
	switch r.Status.Phase {
	case transferv1alpha1.PhaseCompleted, transferv1alpha1.PhaseFailed:
		return Step{Action: ActionNone, Phase: r.Status.Phase}
	}
	rec := r.Status.Record
	if rec == nil {
		if r.DeletionTimestamp != nil {
			return Step{Action: ActionFail, Phase: transferv1alpha1.PhaseFailed, Reason: ReasonRequestDeleted,
				Message: "the request was deleted before the transfer began; nothing was changed"}
		}
		if o.Match.Accept == nil {
			return Step{Action: ActionNone, Phase: transferv1alpha1.PhasePending, Reason: ReasonWaitingForMatch, Message: o.Match.Request.Message}
		}
	}
	if rec == nil {
		for _, sec := range r.Spec.Secrets {
			if sec.Namespace != r.Namespace {
				return wait(transferv1alpha1.PhaseMatched, ReasonSecretNotAllowed,
					"spec.secrets names Secret %s/%s: a request may name only secrets of its own namespace %s (the controller would hand another namespace's secret to the driver)", sec.Namespace, sec.Name, r.Namespace)
			}
		}
	}
	switch r.Spec.Source.Kind {
	case transferv1alpha1.KindVolumeSnapshot:
		if rec == nil {
			return preflightSnapshot(o)
		}
		if rec.RollingBack {
			return rollbackSnapshot(o)
		}
		return forwardSnapshot(o)
	case transferv1alpha1.KindPersistentVolumeClaim:
		if rec == nil {
			return preflightClaim(o)
		}
		if rec.RollingBack {
			return rollbackClaim(o)
		}
		return forwardClaim(o)
	}
	return Step{Action: ActionNone, Phase: transferv1alpha1.PhaseFailed, Reason: ReasonUnsupportedKind,
		Message: fmt.Sprintf("spec.source.kind %q is neither VolumeSnapshot nor PersistentVolumeClaim", r.Spec.Source.Kind)}
}

// Offer is what o's request offers, as the accept's owner is shown it
// (status.offered), nil while its source is not observed.
func Offer(o *Observed) *transferv1alpha1.TransferOffer {
	r := o.Request
	offer := &transferv1alpha1.TransferOffer{Kind: r.Spec.Source.Kind, Source: r.Namespace + "/" + r.Spec.Source.Name, TargetName: r.Spec.TargetName}
	switch {
	case o.SourceClaim != nil && r.Spec.Source.Kind == transferv1alpha1.KindPersistentVolumeClaim:
		offer.Size = sourceSize(o)
		offer.ClassName = ptr.Deref(o.SourceClaim.Spec.StorageClassName, "")
	case o.SourceSnapshot != nil && r.Spec.Source.Kind == transferv1alpha1.KindVolumeSnapshot:
		offer.Size = sourceSize(o)
		offer.ClassName = ptr.Deref(o.SourceSnapshot.Spec.VolumeSnapshotClassName, "")
	default:
		return nil
	}
	return offer
}

// sourceSize is the source claim's requested storage or the source
// snapshot's restoreSize, nil when not known.
func sourceSize(o *Observed) *resource.Quantity {
	switch {
	case o.SourceClaim != nil:
		if q, ok := o.SourceClaim.Spec.Resources.Requests[v1.ResourceStorage]; ok {
			return &q
		}
	case o.SourceSnapshot != nil && o.SourceSnapshot.Status != nil:
		return o.SourceSnapshot.Status.RestoreSize
	}
	return nil
}

// tooLarge is the refusal of a source larger than the accept's
// spec.expect.maxSize, "" if it is not.
func tooLarge(o *Observed) string {
	a := o.Match.Accept
	if a == nil || a.Spec.Expect == nil || a.Spec.Expect.MaxSize == nil {
		return ""
	}
	size, most := sourceSize(o), a.Spec.Expect.MaxSize
	switch {
	case size == nil:
		return fmt.Sprintf("the size of %s %s/%s is not known, and StorageTransferAccept %s/%s takes at most %s (spec.expect.maxSize)",
			o.Request.Spec.Source.Kind, o.Request.Namespace, o.Request.Spec.Source.Name, a.Namespace, a.Name, most.String())
	case size.Cmp(*most) > 0:
		return fmt.Sprintf("%s %s/%s is %s, more than StorageTransferAccept %s/%s takes (spec.expect.maxSize %s)",
			o.Request.Spec.Source.Kind, o.Request.Namespace, o.Request.Spec.Source.Name, size.String(), a.Namespace, a.Name, most.String())
	}
	return ""
}

// wait is a step that changes nothing but the status.
func wait(phase transferv1alpha1.Phase, reason, format string, args ...any) Step {
	return Step{Action: ActionNone, Phase: phase, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// act is a forward step of a transfer under way: the record is the
// current one with Step set to the action.
func act(rec *transferv1alpha1.TransferRecord, a Action, format string, args ...any) Step {
	next := rec.DeepCopy()
	next.Step = string(a)
	return Step{Action: a, Phase: transferv1alpha1.PhaseTransferring, Reason: ReasonTransferring,
		Message: fmt.Sprintf(format, args...), Record: next}
}

// commit is a step at or past the point of no return: its record says so,
// for good, before the step changes anything. A rollback is never planned
// from such a record, whatever the world shows afterwards.
func commit(rec *transferv1alpha1.TransferRecord, a Action, format string, args ...any) Step {
	s := act(rec, a, format, args...)
	s.Record.PointOfNoReturn = true
	return s
}

// handOver records, with step s, that the target's owner owns the object
// from now on.
func handOver(s Step) Step {
	s.Record.HandedOver = true
	return s
}

// startReturn records that the object goes back to the source namespace,
// and why.
func startReturn(rec *transferv1alpha1.TransferRecord, format string, args ...any) Step {
	next := rec.DeepCopy()
	next.PointOfNoReturn, next.Returning, next.ReturnMessage = true, true, fmt.Sprintf(format, args...)
	next.Step = string(ActionStartReturn)
	return Step{Action: ActionStartReturn, Phase: transferv1alpha1.PhaseTransferring, Reason: ReasonTargetRefused,
		Message: next.ReturnMessage + "; giving it back to the source namespace", Record: next}
}

// giveBack is a step of a return: as commit, with the return's reason.
func giveBack(rec *transferv1alpha1.TransferRecord, a Action, format string, args ...any) Step {
	s := commit(rec, a, format, args...)
	s.Reason = ReasonTargetRefused
	s.Message = rec.ReturnMessage + "; giving it back: " + s.Message
	return s
}

// returned ends a return.
func returned(o *Observed, kind string) Step {
	r := o.Request
	return Step{Action: ActionFail, Phase: transferv1alpha1.PhaseFailed, Reason: ReasonReturned,
		Message: fmt.Sprintf("%s; %s %s/%s was given back, with the same data", r.Status.Record.ReturnMessage, kind, r.Namespace, r.Spec.Source.Name)}
}

// PastPointOfNoReturn reports whether o's transfer is past its point of no
// return: recorded so, and the source seen deleted (the record is written
// before the deletion, which a crash or a lost answer may not have sent).
func PastPointOfNoReturn(o *Observed) bool {
	rec := o.Request.Status.Record
	if rec == nil || !rec.PointOfNoReturn {
		return false
	}
	var src metav1.Object
	switch {
	case o.SourceSnapshot != nil && o.Request.Spec.Source.Kind == transferv1alpha1.KindVolumeSnapshot:
		src = o.SourceSnapshot
	case o.SourceClaim != nil && o.Request.Spec.Source.Kind == transferv1alpha1.KindPersistentVolumeClaim:
		src = o.SourceClaim
	}
	return rec.Returning || src == nil || string(src.GetUID()) != rec.SourceUID || src.GetDeletionTimestamp() != nil
}

// Refused is the step that follows a create of action a that the API
// server refused for good (admission, a quota, the namespace terminating
// or gone) with message: before the point of no return the transfer waits
// and says so (its source is untouched, its owner may withdraw); after it,
// a target refused means the object is given back; a return refused needs
// a human.
func Refused(o *Observed, a Action, message string) Step {
	rec := o.Request.Status.Record
	switch {
	case rec == nil:
		return wait(transferv1alpha1.PhaseMatched, ReasonTargetRefused, "%s", message)
	case rec.Returning:
		return wait(transferv1alpha1.PhaseTransferring, ReasonReturnRefused,
			"%s; giving it back was refused too (%s): %s; the data is kept (Retain) until it is admitted", rec.ReturnMessage, a, message)
	case rec.RollingBack:
		return wait(transferv1alpha1.PhaseTransferring, ReasonNeedsAttention, "%s; rolling back was refused (%s): %s", rec.RollbackMessage, a, message)
	case PastPointOfNoReturn(o):
		return startReturn(rec, "the target refused the transfer after the source was deleted (%s): %s", a, message)
	}
	return wait(transferv1alpha1.PhaseTransferring, ReasonTargetRefused,
		"the target namespace refused the transfer (%s): %s; nothing is deleted until it admits it, delete the StorageTransferRequest to withdraw", a, message)
}

// undo is a step of a rollback: as act, with the rollback's reason kept.
func undo(rec *transferv1alpha1.TransferRecord, a Action, format string, args ...any) Step {
	s := act(rec, a, format, args...)
	s.Reason = ReasonRollingBack
	s.Message = rec.RollbackMessage + "; rolling back: " + s.Message
	return s
}

// startRollback records that the transfer is being undone, and why.
func startRollback(rec *transferv1alpha1.TransferRecord, reason, format string, args ...any) Step {
	next := rec.DeepCopy()
	next.RollingBack, next.RollbackReason, next.RollbackMessage = true, reason, fmt.Sprintf(format, args...)
	next.Step = string(ActionStartRollback)
	return Step{Action: ActionStartRollback, Phase: transferv1alpha1.PhaseTransferring, Reason: ReasonRollingBack,
		Message: next.RollbackMessage + "; rolling back", Record: next}
}

// rolledBack ends a rollback; intact says whether the source is still
// there (else its owner deleted it, and it went as its policy says).
func rolledBack(rec *transferv1alpha1.TransferRecord, intact bool) Step {
	msg := rec.RollbackMessage + "; the transfer was rolled back, the source is as it was"
	if !intact {
		msg = rec.RollbackMessage + "; the transfer was rolled back: nothing was handed over, and the source, deleted by its owner, goes as its deletion policy says"
	}
	return Step{Action: ActionFail, Phase: transferv1alpha1.PhaseFailed, Reason: rec.RollbackReason, Message: msg}
}

// complete ends a transfer.
func complete(o *Observed, kind string) Step {
	return Step{Action: ActionComplete, Phase: transferv1alpha1.PhaseCompleted, Reason: ReasonCompleted,
		Message: fmt.Sprintf("%s %s/%s is now %s/%s", kind, o.Request.Namespace, o.Request.Spec.Source.Name, TargetNamespace(o), o.Request.Spec.TargetName)}
}

// lockHolder is the request UID an object is locked by, "" if none.
func lockHolder(meta metav1.Object) string {
	return meta.GetAnnotations()[LockAnnotation]
}

// lockedBy reports whether r holds the lock of meta.
func lockedBy(meta metav1.Object, r *transferv1alpha1.StorageTransferRequest) bool {
	return lockHolder(meta) == string(r.UID)
}

// lockedByOther reports whether another request holds the lock of meta.
func lockedByOther(meta metav1.Object, r *transferv1alpha1.StorageTransferRequest) bool {
	h := lockHolder(meta)
	return h != "" && h != string(r.UID)
}

// ours reports whether r created meta.
func ours(meta metav1.Object, r *transferv1alpha1.StorageTransferRequest) bool {
	return meta.GetAnnotations()[RequestAnnotation] == string(r.UID)
}

// withdrawn is the rollback of a transfer whose source is still there when
// its request is deleted, its accept is gone, or another request locked
// its source (of kind).
func withdrawn(o *Observed, src metav1.Object, kind string) (Step, bool) {
	if s, ok := withdrawnWhileDeleted(o); ok {
		return s, true
	}
	if r := o.Request; lockedByOther(src, r) {
		return startRollback(r.Status.Record, ReasonSourceLocked, "%s %s/%s was locked by another StorageTransferRequest", kind, r.Namespace, src.GetName()), true
	}
	return Step{}, false
}

// withdrawnWhileDeleted is the rollback of a transfer whose request was
// deleted or whose accept is gone. Before the point of no return with the
// source deleted by its owner, it means the source goes as its owner
// asked: it is not handed over.
func withdrawnWhileDeleted(o *Observed) (Step, bool) {
	r, rec := o.Request, o.Request.Status.Record
	switch {
	case r.DeletionTimestamp != nil:
		return startRollback(rec, ReasonRequestDeleted, "the StorageTransferRequest was deleted"), true
	case o.Match.Accept == nil:
		return startRollback(rec, ReasonAcceptDeleted, "the matching StorageTransferAccept is gone"), true
	}
	return Step{}, false
}
