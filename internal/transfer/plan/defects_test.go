package plan

// Issue 23's defects of the planner, one test (or more) each. Each failed
// on the planner before its fix.

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/transfer/match"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// runTo applies the planned steps up to and including action a.
func (w *world) runTo(t *testing.T, a Action) {
	t.Helper()
	for range 30 {
		s := Next(&w.o)
		if !w.apply(s) {
			t.Fatalf("Step %+v cannot be applied", s)
		}
		if s.Action == a {
			return
		}
	}
	t.Fatalf("%s never came", a)
}

// Defect 1: a member of a VolumeGroupSnapshot cannot be deleted alone.
func TestGroupSnapshotMembersAreNotTransferred(t *testing.T) {
	tests := map[string]func(w *world){
		"the snapshot names its group":       func(w *world) { w.o.SourceSnapshot.Status.VolumeGroupSnapshotName = ptr.To("group") },
		"the content names its group handle": func(w *world) { w.o.SourceContent.Status.VolumeGroupSnapshotHandle = ptr.To("group-1") },
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			w := newSnapshotWorld()
			change(w)
			if s := Next(&w.o); s.Action != ActionNone || s.Reason != ReasonGroupMember || !strings.Contains(s.Message, "cannot be transferred") {
				t.Errorf("Next() = %+v, want a %s wait that says why", s, ReasonGroupMember)
			}
		})
	}
}

// Defect 2: the target claim is created, and so admitted by the target
// namespace, before the source is deleted; refused, the transfer waits
// with the source intact.
func TestClaimTargetRefusedBeforeThePointOfNoReturnLeavesTheSourceIntact(t *testing.T) {
	w := newClaimWorld()
	var got []Action
	for s := Next(&w.o); s.Action != ActionCreateTargetClaim; s = Next(&w.o) {
		got = append(got, s.Action)
		w.apply(s)
	}
	if slices.Contains(got, ActionDeleteSource) {
		t.Fatalf("Actions before the target claim is created: %v, want the source kept", got)
	}
	w.apply(Next(&w.o)) // its record: the create itself is refused
	w.o.TargetClaim = nil
	s := Refused(&w.o, ActionCreateTargetClaim, `persistentvolumeclaims "bar" is forbidden: exceeded quota`)
	if s.Action != ActionNone || s.Reason != ReasonTargetRefused || !strings.Contains(s.Message, "exceeded quota") || !strings.Contains(s.Message, "withdraw") {
		t.Errorf("Refused() = %+v, want a %s wait quoting the refusal and saying how to withdraw", s, ReasonTargetRefused)
	}
	if w.o.SourceClaim.DeletionTimestamp != nil {
		t.Error("The source claim was deleted")
	}
	// Withdrawn meanwhile: everything is undone.
	w.o.Request.DeletionTimestamp = &metav1.Time{}
	_, last := w.run()
	if last.Action != ActionFail || last.Reason != ReasonRequestDeleted || lockHolder(w.o.SourceClaim) != "" ||
		w.o.Volume.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete {
		t.Errorf("After the withdrawal: last %+v, source %+v, volume %+v; want Fail (RequestDeleted) and all undone", last, w.o.SourceClaim, w.o.Volume.Spec)
	}
}

// Defect 2, after the point of no return: a target refused gives the
// volume back to the source namespace, under the source's name.
func TestClaimTargetGoneAfterThePointOfNoReturnGivesTheVolumeBack(t *testing.T) {
	tests := map[string]func(w *world) Step{
		"the target claim is deleted (its namespace terminating)": func(w *world) Step {
			w.o.TargetClaim.DeletionTimestamp = &metav1.Time{}
			return Next(&w.o)
		},
		"re-creating the target claim is refused": func(w *world) Step {
			w.o.TargetClaim = nil
			if s := Next(&w.o); s.Action != ActionCreateTargetClaim {
				w.t().Fatalf("Next() = %+v, want CreateTargetClaim", s)
			}
			return Refused(&w.o, ActionCreateTargetClaim, `namespaces "test" not found`)
		},
		"the target name is taken": func(w *world) Step {
			w.o.TargetClaim = &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "bar", Namespace: "test", UID: "theirs"}}
			return Next(&w.o)
		},
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			w := newClaimWorld()
			w.test = t
			w.runTo(t, ActionDeleteSource)
			s := change(w)
			if s.Action != ActionStartReturn || s.Reason != ReasonTargetRefused {
				t.Fatalf("Step = %+v, want StartReturn", s)
			}
			w.apply(s)
			if w.o.TargetClaim != nil && w.o.TargetClaim.DeletionTimestamp != nil {
				w.o.TargetClaim = nil // the namespace controller
			}
			got, last := w.run()
			for _, a := range got {
				if a == ActionDeleteSource || a == ActionReserveVolume {
					t.Errorf("Actions %v: %s while giving back", got, a)
				}
			}
			checkClaimGivenBack(t, w, last)
			if w.o.TargetClaim != nil && w.o.TargetClaim.UID != "theirs" {
				t.Errorf("Target claim %+v, want theirs kept", w.o.TargetClaim)
			}
		})
	}
}

// Defect 3: a target name taken before the point of no return rolls the
// transfer back with the source intact; no message advises deleting
// anything.
func TestClaimTargetNameTakenBeforeThePointOfNoReturnRollsBack(t *testing.T) {
	w := newClaimWorld()
	w.runTo(t, ActionRetainVolume)
	w.o.TargetClaim = &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "bar", Namespace: "test", UID: "winner",
		Annotations: map[string]string{RequestAnnotation: "another-request"}}}
	got, last := w.run()
	if last.Action != ActionFail || last.Reason != ReasonTargetConflict || slices.Contains(got, ActionDeleteSource) || slices.Contains(got, ActionDeleteTargetClaim) {
		t.Errorf("Actions %v, last %+v; want a rollback (%s) that deletes neither the source nor the winner's claim", got, last, ReasonTargetConflict)
	}
	if w.o.SourceClaim == nil || w.o.SourceClaim.DeletionTimestamp != nil || lockHolder(w.o.SourceClaim) != "" {
		t.Errorf("Source claim %+v, want it as it was", w.o.SourceClaim)
	}
}

// Defect 5: the request deleted with the source (the source namespace
// deleted): nothing is handed over, and the source goes as its owner
// asked, its policy restored.
func TestWithdrawnWhileTheSourceIsDeletedIsNotHandedOver(t *testing.T) {
	t.Run("a claim", func(t *testing.T) {
		w := newClaimWorld()
		w.runTo(t, ActionCreateTargetClaim)
		w.o.Request.DeletionTimestamp = &metav1.Time{}
		w.o.SourceClaim.DeletionTimestamp = &metav1.Time{}
		got, last := w.run()
		if last.Action != ActionFail || last.Reason != ReasonRequestDeleted || slices.Contains(got, ActionReserveVolume) {
			t.Errorf("Actions %v, last %+v; want a rollback (RequestDeleted)", got, last)
		}
		if w.o.TargetClaim != nil || w.o.SourceClaim != nil || w.o.Volume.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete {
			t.Errorf("Target %+v, source %+v, volume %+v; want no target, the source let go under its Delete policy", w.o.TargetClaim, w.o.SourceClaim, w.o.Volume.Spec)
		}
		if !strings.Contains(last.Message, "deleted by its owner") {
			t.Errorf("Message %q, want it to say the source was not kept", last.Message)
		}
	})
	t.Run("a snapshot", func(t *testing.T) {
		w := newSnapshotWorld()
		w.runTo(t, ActionRetainSourceContent)
		w.o.Match = match.Decide(w.o.Request, nil) // the accept is gone too
		w.o.Request.DeletionTimestamp = &metav1.Time{}
		w.o.SourceSnapshot = nil // the snapshot controller lets it go: its content is Retain
		_, last := w.run()
		if last.Action != ActionFail || last.Reason != ReasonRequestDeleted {
			t.Errorf("Last %+v, want a rollback (RequestDeleted)", last)
		}
		if w.o.TargetSnapshot != nil || w.o.TargetContent != nil {
			t.Errorf("Target %+v %+v, want none", w.o.TargetSnapshot, w.o.TargetContent)
		}
		// Not left Retain, bound to nothing: under its original Delete the
		// snapshot controller deletes it, as its owner asked.
		if c := w.o.SourceContent; c == nil || string(c.Spec.DeletionPolicy) != "Delete" || lockedBy(c, w.o.Request) {
			t.Errorf("Source content %+v, want its Delete policy back and no lock", c)
		}
	})
}

// Defect 9: the loser of the race for a claim's lock leaves the winner's
// lock, finalizer and Retain alone.
func TestLosingTheRaceForTheLockLeavesTheWinnersLock(t *testing.T) {
	w := newClaimWorld()
	w.apply(Next(&w.o)) // Begin
	// Another request locked it and retained its volume meanwhile.
	setAnn(&w.o.SourceClaim.ObjectMeta, LockAnnotation, "winner")
	w.o.SourceClaim.Finalizers = append(w.o.SourceClaim.Finalizers, Finalizer)
	w.o.Volume.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimRetain
	w.o.LockHolderExists = true
	got, last := w.run()
	if last.Reason != ReasonSourceLocked || slices.Contains(got, ActionUnlockSource) || slices.Contains(got, ActionRestoreReclaimPolicy) {
		t.Errorf("Actions %v, last %+v; want a rollback that touches nothing of the winner's", got, last)
	}
	if lockHolder(w.o.SourceClaim) != "winner" || !slices.Contains(w.o.SourceClaim.Finalizers, Finalizer) || w.o.Volume.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimRetain {
		t.Errorf("Source %+v, volume %+v; want the winner's lock, finalizer and Retain kept", w.o.SourceClaim.ObjectMeta, w.o.Volume.Spec)
	}
}

// A lock that names no request (the source's owner edited it) holds
// nothing: the rollback restores the Retain this transfer set, or the
// owner could delete the claim and leave its backend volume behind,
// outside every quota.
func TestARollbackRestoresItsRetainWhenTheLockNamesNoRequest(t *testing.T) {
	w := newClaimWorld()
	w.runTo(t, ActionRetainVolume)
	setAnn(&w.o.SourceClaim.ObjectMeta, LockAnnotation, "made-up")
	_, last := w.run()
	if last.Action != ActionFail || w.o.Volume.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete {
		t.Errorf("Last %+v, volume %+v; want a rollback that restores Delete", last, w.o.Volume.Spec)
	}
}

// Defect 18 (and 5): a crash inside the Retain step, then the owner
// deletes the source: the content was never retained, so nothing is built
// on a backend snapshot being deleted, whatever the record says.
func TestACrashInsideRetainThenTheOwnersDeletionBuildsNothing(t *testing.T) {
	w := newSnapshotWorld()
	w.runTo(t, ActionLockSource)
	s := Next(&w.o)
	if s.Action != ActionRetainSourceContent {
		t.Fatalf("Next() = %+v, want RetainSourceContent", s)
	}
	w.o.Request.Status.Record = s.Record // recorded; the controller dies before the write
	w.o.SourceSnapshot.DeletionTimestamp = &metav1.Time{}
	checkLeftToItsDeletion(t, w)
}

// Defect 18: the point of no return is recorded once and never moves
// back: a target re-created after it does not reopen a rollback.
func TestThePointOfNoReturnNeverMovesBack(t *testing.T) {
	w := newSnapshotWorld()
	w.runTo(t, ActionDeleteSource)
	if !w.o.Request.Status.Record.PointOfNoReturn {
		t.Fatal("DeleteSource's record does not say the point of no return is passed")
	}
	w.o.TargetSnapshot, w.o.Request.DeletionTimestamp = nil, &metav1.Time{}
	s := Next(&w.o)
	if s.Action == ActionStartRollback || s.Record != nil && !s.Record.PointOfNoReturn {
		t.Errorf("Next() = %+v, want no rollback past the point of no return", s)
	}
}

// An ephemeral volume's claim goes with its pod: it is not transferred.
func TestTheClaimOfAnEphemeralVolumeIsNotTransferred(t *testing.T) {
	w := newClaimWorld()
	w.o.SourceClaim.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "app-0", UID: "p1", Controller: ptr.To(true)}}
	if s := Next(&w.o); s.Action != ActionNone || s.Reason != ReasonEphemeral || s.Phase != transferv1alpha1.PhaseMatched {
		t.Errorf("Next() = %+v, want a %s wait", s, ReasonEphemeral)
	}
}

// Defect 6: a request names only secrets of its own namespace, and the
// target depends on no secret of the source namespace: a backend snapshot
// that needs a deletion secret waits until the accept names one of its
// own. Defect 15: the record carries what the target content needs.
func TestSecretsAreTheirOwnNamespaces(t *testing.T) {
	t.Run("a secret of another namespace is refused", func(t *testing.T) {
		w := newSnapshotWorld()
		w.o.Request.Spec.Secrets = []transferv1alpha1.TransferSecret{{Name: "admin", Namespace: "kube-system", Type: SnapshotterSecretType}}
		if s := Next(&w.o); s.Action != ActionNone || s.Reason != ReasonSecretNotAllowed || !strings.Contains(s.Message, "kube-system/admin") {
			t.Errorf("Next() = %+v, want a %s wait naming the secret", s, ReasonSecretNotAllowed)
		}
	})
	t.Run("a deletion secret is needed from the accept", func(t *testing.T) {
		w := newSnapshotWorld()
		setAnn(&w.o.SourceContent.ObjectMeta, DeletionSecretNameAnnotation, "prod-secret")
		setAnn(&w.o.SourceContent.ObjectMeta, DeletionSecretNamespaceAnnotation, "prod")
		if s := Next(&w.o); s.Action != ActionNone || s.Reason != ReasonDeletionSecretNeeded || !strings.Contains(s.Message, "spec.deletionSecretName") {
			t.Fatalf("Next() = %+v, want a %s wait", s, ReasonDeletionSecretNeeded)
		}
		w.o.Match.Accept.Spec.DeletionSecretName = "test-secret"
		s := Next(&w.o)
		if s.Action != ActionBegin || s.Record.TargetDeletionSecret != "test/test-secret" || s.Record.SourceDeletionSecret != "prod/prod-secret" {
			t.Errorf("Next() = %+v (record %+v), want Begin recording test/test-secret for the target and prod/prod-secret to give it back", s, s.Record)
		}
	})
	t.Run("the volume mode and its change are recorded", func(t *testing.T) {
		w := newSnapshotWorld()
		w.o.SourceContent.Spec.SourceVolumeMode = ptr.To(v1.PersistentVolumeBlock)
		setAnn(&w.o.SourceContent.ObjectMeta, AllowVolumeModeChangeAnnotation, "true")
		s := Next(&w.o)
		if s.Action != ActionBegin || ptr.Deref(s.Record.SourceVolumeMode, "") != v1.PersistentVolumeBlock || s.Record.AllowVolumeModeChange != "true" {
			t.Errorf("Next() = %+v (record %+v), want Begin recording sourceVolumeMode Block and the change allowed", s, s.Record)
		}
	})
}

// Defect 8: the accept agrees to a maximum size; a larger source waits
// before anything changes, and one resized past it after the transfer
// began rolls back. The accept is shown what is offered.
func TestTheAcceptsMaximumSize(t *testing.T) {
	w := newClaimWorld()
	w.o.SourceClaim.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")}
	w.o.Match.Accept.Spec.Expect = &transferv1alpha1.TransferExpectation{MaxSize: ptr.To(resource.MustParse("5Gi"))}
	if s := Next(&w.o); s.Action != ActionNone || s.Reason != ReasonTooLarge || !strings.Contains(s.Message, "10Gi") || !strings.Contains(s.Message, "5Gi") {
		t.Fatalf("Next() = %+v, want a %s wait naming both sizes", s, ReasonTooLarge)
	}
	if offer := Offer(&w.o); offer == nil || offer.Size.String() != "10Gi" || offer.Kind != transferv1alpha1.KindPersistentVolumeClaim || offer.Source != "prod/data" || offer.ClassName != "csi" {
		t.Errorf("Offer() = %+v, want the claim prod/data of class csi, 10Gi", offer)
	}
	w.o.SourceClaim.Spec.Resources.Requests[v1.ResourceStorage] = resource.MustParse("5Gi")
	w.runTo(t, ActionLockSource)
	w.o.SourceClaim.Spec.Resources.Requests[v1.ResourceStorage] = resource.MustParse("6Gi")
	got, last := w.run()
	if last.Action != ActionFail || last.Reason != ReasonTooLarge || slices.Contains(got, ActionDeleteSource) {
		t.Errorf("Actions %v, last %+v; want a rollback (%s)", got, last, ReasonTooLarge)
	}
}

// Defect 17: nothing in the target namespace can be restored from before
// the point of no return: the target VolumeSnapshot is created after the
// source's deletion, once the target namespace has admitted it (a dry run
// the controller makes before DeleteSource's record).
func TestNoTargetSnapshotBeforeThePointOfNoReturn(t *testing.T) {
	w := newSnapshotWorld()
	for s := Next(&w.o); s.Action != ActionDeleteSource; s = Next(&w.o) {
		if w.o.TargetSnapshot != nil {
			t.Fatalf("Before %s: target snapshot %+v exists", s.Action, w.o.TargetSnapshot)
		}
		w.apply(s)
	}
	if s := Next(&w.o); !s.Admit {
		t.Errorf("DeleteSource = %+v, want it to ask for the target's admission first", s)
	}
	// The target namespace refuses: the transfer waits, nothing deleted.
	s := Refused(&w.o, ActionCreateTargetSnapshot, "exceeded quota")
	if s.Action != ActionNone || s.Reason != ReasonTargetRefused || s.Record != nil {
		t.Errorf("Refused() = %+v, want a %s wait that records nothing", s, ReasonTargetRefused)
	}
}

// Given back, the object is its owner's: deleted by them before the
// transfer ended, it goes as its policy says, and nothing is made again on
// the deleted data (level-2 explorer, second review).
func TestAnObjectGivenBackAndDeletedIsNotMadeAgain(t *testing.T) {
	w := newSnapshotWorld()
	w.runTo(t, ActionCreateTargetContent)
	delete(w.o.TargetContent.Annotations, RequestAnnotation) // refused: given back
	w.runTo(t, ActionRestoreDeletionPolicy)
	if !w.o.Request.Status.Record.HandedOver {
		t.Fatal("Restoring the policy of the content given back does not record the hand-back")
	}
	// Its owner deletes it: the content goes under Delete, and the backend
	// snapshot with it.
	w.o.SourceSnapshot, w.o.ReturnContent = nil, nil
	got, last := w.run()
	if slices.Contains(got, ActionCreateReturnContent) || slices.Contains(got, ActionReturnSource) || last.Reason != ReasonReturned {
		t.Errorf("Actions %v, last %+v; want the return ended, nothing made again", got, last)
	}
}

// The hand-back is recorded before the policy is written: a controller
// that stops in between writes it after its restart (level-2 explorer,
// snapshot-policy-not-restored).
func TestTheHandBackIsFinishedAfterACrash(t *testing.T) {
	w := newSnapshotWorld()
	w.runTo(t, ActionCreateTargetContent)
	delete(w.o.TargetContent.Annotations, RequestAnnotation) // refused: given back
	for s := Next(&w.o); s.Action != ActionRestoreDeletionPolicy; s = Next(&w.o) {
		w.apply(s)
	}
	s := Next(&w.o)
	w.o.Request.Status.Record = s.Record // recorded; the controller dies before the write
	_, last := w.run()
	if c := w.o.ReturnContent; c == nil || string(c.Spec.DeletionPolicy) != "Delete" || last.Reason != ReasonReturned {
		t.Errorf("Return content %+v, last %+v; want its Delete policy restored after the restart, then ReturnedToSource", c, last)
	}
}
