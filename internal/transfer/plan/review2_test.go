package plan

// Second adversarial review (c6e546b..HEAD, 177154f, 0d52ce7, 2ad707a,
// 17eef99, fcc55ad). Each test here fails on the planner as written; each
// says what it shows.

import (
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// loseTheDeletion takes the planned DeleteSource as a controller that
// wrote its record (pointOfNoReturn) and then died, or lost the answer,
// before the deletion reached the API server: the record says past the
// point of no return, the source is intact (F10's window).
func loseTheDeletion(t *testing.T, w *world) {
	t.Helper()
	s := Next(&w.o)
	if s.Action != ActionDeleteSource || !s.Record.PointOfNoReturn {
		t.Fatalf("Setup: Next() = %+v, want DeleteSource", s)
	}
	w.o.Request.Status.Record = s.Record.DeepCopy()
	w.o.Request.Status.Phase = s.Phase
}

// REVIEW2 FINDING A (snapshots). F10 says an intact source is never past
// the point of no return. But Refused decides on the record alone: in
// F10's window (DeleteSource recorded, the deletion lost, the source
// intact) the controller plans DeleteSource again and has the target
// admit it first; refused this time (a quota filled meanwhile, a policy,
// the namespace terminating), Refused sees pointOfNoReturn and starts a
// give-back of a source that was never deleted. returnSnapshot then waits
// "for the deleted VolumeSnapshot to go", which is not deleted, forever:
// the request cannot be withdrawn (the return path ignores its deletion),
// the source stays locked and its content Retain, and the wait's reason
// (TargetRefused) is not counted by the stuck gauge.
func TestReview2ARefusedAdmissionInTheLostDeletionWindowDoesNotGiveBackAnIntactSnapshot(t *testing.T) {
	w := newSnapshotWorld()
	w.test = t
	w.runTo(t, lastStepBeforeDeletion(t))
	loseTheDeletion(t, w)

	s := Next(&w.o)
	if s.Action != ActionDeleteSource || !s.Admit {
		t.Fatalf("Setup: Next() = %+v, want DeleteSource admitted first", s)
	}
	refused := Refused(&w.o, ActionCreateTargetSnapshot, `volumesnapshots "bar" is forbidden: exceeded quota`)
	if refused.Action == ActionStartReturn {
		t.Errorf("The target refused admission while the source is intact, and the plan starts a give-back: %+v (want a TargetRefused wait: the source was never deleted)", refused)
	}
	if refused.Action != ActionStartReturn {
		return
	}
	// Played on: the return waits for a deletion that never comes, and
	// its request cannot withdraw it.
	w.apply(refused)
	_, last := w.run()
	t.Logf("Then: %s %s: %s", last.Action, last.Reason, last.Message)
	w.o.Request.DeletionTimestamp = &metav1.Time{}
	got, last := w.run()
	if last.Action != ActionFail {
		t.Errorf("The request deleted, the source intact: actions %v, last %s (%s) %q; want the transfer rolled back and ended, the lock and Retain undone",
			got, last.Action, last.Reason, last.Message)
	}
	if w.o.SourceSnapshot == nil || lockedBy(w.o.SourceSnapshot, w.o.Request) || w.o.SourceContent.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentDelete {
		t.Errorf("Source %+v, content policy %s: want it intact, unlocked, Delete", w.o.SourceSnapshot.ObjectMeta, w.o.SourceContent.Spec.DeletionPolicy)
	}
}

// REVIEW2 FINDING A (claims). The same for a claim: in F10's window its
// target claim's owner deletes the target claim; the plan creates it
// again (its record still saying pointOfNoReturn), the quota refuses it,
// and Refused starts a give-back of the intact claim. returnClaim waits
// for pvc-protection of a claim that is not being deleted: forever, and
// no withdrawal.
func TestReview2ARefusedTargetClaimInTheLostDeletionWindowDoesNotGiveBackAnIntactClaim(t *testing.T) {
	w := newClaimWorld()
	w.test = t
	w.runTo(t, ActionCreateTargetClaim)
	loseTheDeletion(t, w)
	w.o.TargetClaim = nil // its owner deleted it

	s := Next(&w.o)
	if s.Action != ActionCreateTargetClaim {
		t.Fatalf("Setup: Next() = %+v, want CreateTargetClaim", s)
	}
	w.o.Request.Status.Record = s.Record.DeepCopy() // written before the create
	refused := Refused(&w.o, ActionCreateTargetClaim, `persistentvolumeclaims "bar" is forbidden: exceeded quota`)
	if refused.Action == ActionStartReturn {
		t.Errorf("The target claim refused while the source claim is intact, and the plan starts a give-back: %+v (want a TargetRefused wait)", refused)
	}
	if refused.Action != ActionStartReturn {
		return
	}
	w.apply(refused)
	w.o.Request.DeletionTimestamp = &metav1.Time{}
	got, last := w.run()
	if last.Action != ActionFail {
		t.Errorf("The request deleted, the source claim intact: actions %v, last %s (%s) %q; want it rolled back",
			got, last.Action, last.Reason, last.Message)
	}
}

// REVIEW2 FINDING B. Defect 17 moved the target VolumeSnapshot after the
// point of no return so that "until the point of no return nothing in the
// target namespace can be restored from". But the target content is still
// created before it, pre-provisioned, its volumeSnapshotRef naming
// test/bar with no UID: the snapshot controller binds it to any
// VolumeSnapshot test/bar that names it. Its name is predictable
// (snapcontent-transfer-<request UID>) and not a secret (the request's
// status, events and messages, the target namespace's admission sees it in
// the dry run). The target namespace's owner creates that snapshot before
// the controller does (the window is as long as the dry run is refused,
// e.g. while they hold the quota full), restores a claim from it, and the
// transfer then rolls back (TargetConflict): the source keeps the snapshot
// and the target keeps a copy, which is what defect 17 meant to prevent.
func TestReview2NothingInTheTargetNamespaceBindsTheTargetContentBeforeThePointOfNoReturn(t *testing.T) {
	w := newSnapshotWorld()
	w.test = t
	w.runTo(t, lastStepBeforeDeletion(t))
	r := w.o.Request
	if r.Status.Record.PointOfNoReturn {
		t.Fatal("Setup: past the point of no return already")
	}
	// The target namespace's owner, not the controller:
	theirs := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: r.Spec.TargetName, Namespace: "test", UID: "theirs"},
		Spec: snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{VolumeSnapshotContentName: ptr.To(TargetContentName(r))}}}
	w.o.TargetSnapshot = theirs
	w.settle() // the snapshot controller binds a pre-provisioned content to the snapshot that names it
	if snapshotReady(theirs, TargetContentName(r)) && !r.Status.Record.PointOfNoReturn {
		t.Errorf("Before the point of no return, VolumeSnapshot test/bar of the target's owner is readyToUse on backend snapshot %s through VolumeSnapshotContent %s (ref %+v): restorable in the target namespace",
			r.Status.Record.SnapshotHandle, TargetContentName(r), w.o.TargetContent.Spec.VolumeSnapshotRef)
	}
	got, last := w.run()
	t.Logf("Then: %v, last %s (%s): %s", got, last.Action, last.Reason, last.Message)
	if last.Action == ActionFail && w.o.SourceSnapshot != nil && w.o.TargetSnapshot != nil && snapshotReady(w.o.TargetSnapshot, "") {
		t.Errorf("The transfer rolled back with the source intact, and the target namespace's VolumeSnapshot %s/%s was ready on the same backend snapshot meanwhile: a copy on both sides",
			w.o.TargetSnapshot.Namespace, w.o.TargetSnapshot.Name)
	}
}

// REVIEW2 FINDING F. For claims the first review made "ours" mean the
// annotation and the recorded spec (targetClaimOurs: the request's UID is
// on every object the transfer creates, and the target's owner may copy
// it). For snapshots "ours" is still the annotation alone. A VolumeSnapshot
// test/bar of the target's owner, annotated with the request's UID but
// bound to a content of their own, made before the source is deleted, is
// taken for the controller's: prepareSnapshot sees no conflict and skips
// the admission (Admit is only asked when no target snapshot exists), the
// source is deleted, and past the point of no return the transfer waits
// for that snapshot to be bound to snapcontent-transfer-<UID>: forever,
// with reason WaitingForTarget (not counted by the stuck gauge), neither
// handed over nor given back.
func TestReview2AnAnnotatedTargetSnapshotOfAnotherContentIsNotOurs(t *testing.T) {
	w := newSnapshotWorld()
	w.test = t
	w.runTo(t, lastStepBeforeDeletion(t))
	r := w.o.Request
	impostor := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: r.Spec.TargetName, Namespace: "test", UID: "theirs",
		Annotations: map[string]string{RequestAnnotation: string(r.UID)}},
		Spec:   snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{VolumeSnapshotContentName: ptr.To("their-content")}},
		Status: &snapv1.VolumeSnapshotStatus{ReadyToUse: ptr.To(true), BoundVolumeSnapshotContentName: ptr.To("their-content")}}
	w.o.TargetSnapshot = impostor
	s := Next(&w.o)
	if s.Action == ActionDeleteSource {
		t.Errorf("A VolumeSnapshot test/bar bound to another content, annotated with the request's UID, is taken for the transfer's: Next() = %s (admit %v), want a TargetConflict rollback", s.Action, s.Admit)
	}
	got, last := w.run()
	if r.Status.Record.PointOfNoReturn && last.Action == ActionNone {
		t.Errorf("Then %v, and past the point of no return the transfer waits for good: %s %q", got, last.Reason, last.Message)
	}
}

// lastStepBeforeDeletion is the snapshot step after which DeleteSource
// comes: CreateTargetContent at 82e1f85, RetainSourceContent since
// fedb880 (the target content made after the deletion too).
func lastStepBeforeDeletion(t *testing.T) Action {
	t.Helper()
	w := newSnapshotWorld()
	w.test = t
	last := ActionNone
	for range 30 {
		s := Next(&w.o)
		if s.Action == ActionDeleteSource {
			return last
		}
		last = s.Action
		w.apply(s)
	}
	t.Fatal("DeleteSource never came")
	return last
}
