package plan

import (
	"slices"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/transfer/match"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// snapshotSteps: the target content and VolumeSnapshot are created after
// the source's deletion, so nothing in the target namespace can be
// restored from before the point of no return (issue 23 defect 17).
var snapshotSteps = []Action{ActionBegin, ActionLockSource, ActionRetainSourceContent, ActionDeleteSource,
	ActionCreateTargetContent, ActionCreateTargetSnapshot, ActionDeleteSourceContent, ActionRestoreDeletionPolicy, ActionComplete}

// checkSnapshotTransferred checks the result the issue asks for: the
// target snapshot bound to a content of the same backend snapshot under
// the original policy, the source and its content gone.
func checkSnapshotTransferred(t *testing.T, w *world) {
	t.Helper()
	o := w.o
	if o.SourceSnapshot != nil || o.SourceContent != nil {
		t.Errorf("The source is still there: %v %v", o.SourceSnapshot, o.SourceContent)
	}
	if o.TargetSnapshot == nil || o.TargetSnapshot.Namespace != "test" || o.TargetSnapshot.Name != "bar" || !snapshotReady(o.TargetSnapshot, "snapcontent-transfer-r1") {
		t.Fatalf("Target snapshot = %+v, want test/bar ready and bound to snapcontent-transfer-r1", o.TargetSnapshot)
	}
	c := o.TargetContent
	if snapshotHandle(c) != "snap-1" || c.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentDelete || c.Spec.Driver != "local.csi" {
		t.Errorf("Target content = %+v, want snap-1 of local.csi under Delete", c.Spec)
	}
	if o.Request.Status.Phase != transferv1alpha1.PhaseCompleted {
		t.Errorf("Phase = %s, want Completed", o.Request.Status.Phase)
	}
}

func TestSnapshotTransferTakesTheDocumentedSteps(t *testing.T) {
	w := newSnapshotWorld()
	got, last := w.run()
	if !slices.Equal(got, snapshotSteps) {
		t.Fatalf("Actions = %v, want %v (last step %+v)", got, snapshotSteps, last)
	}
	checkSnapshotTransferred(t, w)
}

// checkCrashAtEveryStep kills the controller after it wrote the record of
// each step and before the step's change, restarts it, and checks that the
// transfer takes the remaining steps and ends as check wants.
func checkCrashAtEveryStep(t *testing.T, newWorld func() *world, steps []Action, check func(*testing.T, *world)) {
	for k := range len(steps) - 1 {
		t.Run(string(steps[k]), func(t *testing.T) {
			w := newWorld()
			for range k {
				w.apply(Next(&w.o))
			}
			s := Next(&w.o)
			if s.Action != steps[k] || s.Record == nil || s.Record.Step != string(s.Action) {
				t.Fatalf("Step %d = %+v, want %s with its record", k, s, steps[k])
			}
			w.o.Request.Status.Record = s.Record
			want := steps[k:]
			if k == 0 {
				want = want[1:] // Begin's change is its record (the finalizer comes first)
			}
			got, last := w.run()
			if !slices.Equal(got, want) {
				t.Fatalf("After the restart: %v, want %v (last %+v)", got, want, last)
			}
			check(t, w)
		})
	}
}

func TestSnapshotTransferFinishesAfterACrashAtEveryStep(t *testing.T) {
	checkCrashAtEveryStep(t, newSnapshotWorld, snapshotSteps, checkSnapshotTransferred)
}

func TestSnapshotTransferRollsBackWhenTheAcceptGoesBeforeTheSourceIsDeleted(t *testing.T) {
	for k := 1; k < slices.Index(snapshotSteps, ActionDeleteSource); k++ {
		t.Run("after "+string(snapshotSteps[k-1]), func(t *testing.T) {
			w := newSnapshotWorld()
			for range k {
				w.apply(Next(&w.o))
			}
			w.o.Match = match.Decide(w.o.Request, nil)
			got, last := w.run()
			if last.Action != ActionFail || last.Reason != ReasonAcceptDeleted || got[0] != ActionStartRollback {
				t.Fatalf("Rollback = %v ending with %+v, want StartRollback ... Fail (AcceptDeleted)", got, last)
			}
			o := w.o
			if o.TargetSnapshot != nil || o.TargetContent != nil {
				t.Errorf("Target objects left: %v %v", o.TargetSnapshot, o.TargetContent)
			}
			if o.SourceSnapshot == nil || lockHolder(o.SourceSnapshot) != "" || o.SourceContent.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentDelete {
				t.Errorf("Source not restored: %+v, policy %s", o.SourceSnapshot, o.SourceContent.Spec.DeletionPolicy)
			}
		})
	}
}

func TestSnapshotTransferRollsForwardOnceTheSourceIsDeleted(t *testing.T) {
	w := newSnapshotWorld()
	for range slices.Index(snapshotSteps, ActionDeleteSource) + 1 {
		w.apply(Next(&w.o))
	}
	w.o.Request.DeletionTimestamp = &metav1.Time{}
	w.run()
	checkSnapshotTransferred(t, w)
}

// TestSnapshotTransferGivesBackWhenTheAcceptGoesAfterThePointOfNoReturn:
// the target withdrew before anything was handed over (the target
// snapshot is created after the source's deletion).
func TestSnapshotTransferGivesBackWhenTheAcceptGoesAfterThePointOfNoReturn(t *testing.T) {
	w := newSnapshotWorld()
	for range slices.Index(snapshotSteps, ActionDeleteSource) + 1 {
		w.apply(Next(&w.o))
	}
	w.o.Match = match.Decide(w.o.Request, nil)
	_, last := w.run()
	checkSnapshotGivenBack(t, w, last)
}

func TestSnapshotRefusals(t *testing.T) {
	tests := map[string]struct {
		change     func(w *world)
		wantPhase  transferv1alpha1.Phase
		wantReason string
	}{
		"no accept: pending": {
			change: func(w *world) { w.o.Match = match.Decide(w.o.Request, nil) }, wantPhase: transferv1alpha1.PhasePending, wantReason: ReasonWaitingForMatch},
		"a wrong token is no match": {
			change: func(w *world) {
				a := w.o.Match.Accept.DeepCopy()
				a.Spec.RequestToken = "bm90LXRoZS10b2tlbi1hdC1hbGw"
				w.o.Match = match.Decide(w.o.Request, []*transferv1alpha1.StorageTransferAccept{a})
			}, wantPhase: transferv1alpha1.PhasePending, wantReason: ReasonWaitingForMatch},
		"source not found waits": {
			change: func(w *world) { w.o.SourceSnapshot = nil }, wantPhase: transferv1alpha1.PhaseMatched, wantReason: ReasonSourceNotFound},
		"source not ready waits": {
			change: func(w *world) { w.o.SourceSnapshot.Status.ReadyToUse = ptr.To(false) }, wantPhase: transferv1alpha1.PhaseMatched, wantReason: ReasonSourceNotReady},
		"source being deleted waits": {
			change: func(w *world) { w.o.SourceSnapshot.DeletionTimestamp = &metav1.Time{} }, wantPhase: transferv1alpha1.PhaseMatched, wantReason: ReasonSourceDeleting},
		"source locked by another transfer waits": {
			change: func(w *world) { setAnn(&w.o.SourceSnapshot.ObjectMeta, LockAnnotation, "other") }, wantPhase: transferv1alpha1.PhaseMatched, wantReason: ReasonSourceLocked},
		"content bound to another snapshot is not guessed about": {
			change: func(w *world) { w.o.SourceContent.Spec.VolumeSnapshotRef.UID = uid("s0") }, wantPhase: transferv1alpha1.PhaseMatched, wantReason: ReasonBoundElsewhere},
		"content without handle waits": {
			change: func(w *world) { w.o.SourceContent.Status.SnapshotHandle = nil }, wantPhase: transferv1alpha1.PhaseMatched, wantReason: ReasonSourceNotReady},
		"target name taken waits": {
			change: func(w *world) {
				w.o.TargetSnapshot = &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "bar", Namespace: "test"}}
			}, wantPhase: transferv1alpha1.PhaseMatched, wantReason: ReasonTargetNameTaken},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := newSnapshotWorld()
			tc.change(w)
			s := Next(&w.o)
			if s.Action != ActionNone || s.Phase != tc.wantPhase || s.Reason != tc.wantReason || s.Message == "" {
				t.Errorf("Next() = %+v, want no action, phase %s, reason %s and a message", s, tc.wantPhase, tc.wantReason)
			}
		})
	}
}

func TestSnapshotTransferGivesBackAfterAForeignTargetContentPastThePointOfNoReturn(t *testing.T) {
	w := newSnapshotWorld()
	for range slices.Index(snapshotSteps, ActionCreateTargetContent) + 1 {
		w.apply(Next(&w.o))
	}
	delete(w.o.TargetContent.Annotations, RequestAnnotation)
	if s := Next(&w.o); s.Action != ActionStartReturn || s.Reason != ReasonTargetRefused {
		t.Fatalf("Next() = %+v, want StartReturn", s)
	}
	_, last := w.run()
	checkSnapshotGivenBack(t, w, last)
}

func TestSnapshotTransferFailsWhenTheSourceWentBeforeItWasRetained(t *testing.T) {
	w := newSnapshotWorld()
	w.apply(Next(&w.o)) // Begin
	w.o.SourceSnapshot, w.o.SourceContent = nil, nil
	checkLeftToItsDeletion(t, w)
}

func TestSnapshotTransferFailsWhenItsOwnerDeletesTheSourceBeforeItIsRetained(t *testing.T) {
	for k := 1; k <= slices.Index(snapshotSteps, ActionLockSource)+1; k++ {
		t.Run("after "+string(snapshotSteps[k-1]), func(t *testing.T) {
			w := newSnapshotWorld()
			for range k {
				w.apply(Next(&w.o))
			}
			// Its content is still Delete: the snapshot controller deletes
			// it, and the backend snapshot, as the owner asked.
			w.o.SourceSnapshot.DeletionTimestamp = &metav1.Time{}
			checkLeftToItsDeletion(t, w)
		})
	}
}

func TestSnapshotTransferRollsForwardWhenItsOwnerDeletesTheSourceOnceItIsRetained(t *testing.T) {
	w := newSnapshotWorld()
	for range slices.Index(snapshotSteps, ActionRetainSourceContent) + 1 {
		w.apply(Next(&w.o))
	}
	w.o.SourceSnapshot = nil
	w.run()
	checkSnapshotTransferred(t, w)
}

func TestSnapshotRollbackLeavesATargetWhoseContentIsNotRetain(t *testing.T) {
	w := newSnapshotWorld()
	for range slices.Index(snapshotSteps, ActionCreateTargetContent) + 1 {
		w.apply(Next(&w.o))
	}
	w.o.Match = match.Decide(w.o.Request, nil)
	// Deleting this content would delete the backend snapshot the source
	// still names.
	w.o.TargetContent.Spec.DeletionPolicy = snapv1.VolumeSnapshotContentDelete
	got, last := w.run()
	if slices.Contains(got, ActionDeleteTargetContent) || last.Reason != ReasonNeedsAttention {
		t.Errorf("Rollback = %v ending with %+v, want the target content kept and a NeedsAttention wait", got, last)
	}
}
