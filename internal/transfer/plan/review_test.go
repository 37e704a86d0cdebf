package plan

// Adversarial review of fc38ec2 (the point of no return recorded once,
// the target claim created before the source is deleted, giving back).
// Each test here failed on the planner when it was written; each says
// what it shows.

import (
	"slices"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/transfer/match"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// secondRequest is another request of the source owner for the same
// source name, matched by an accept in namespace "other", observing the
// objects of w (shared, not copied: what one world's steps do, the other
// sees).
func secondRequest(w *world) *world {
	r1 := w.o.Request
	r2 := &transferv1alpha1.StorageTransferRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "request-2", Namespace: r1.Namespace, UID: "r2"},
		Spec: transferv1alpha1.StorageTransferRequestSpec{Source: r1.Spec.Source,
			AcceptName: "accept-2", TargetName: "baz", Token: "c2Vjb25kLXRva2VuLXNlY29uZA"},
	}
	a2 := &transferv1alpha1.StorageTransferAccept{ObjectMeta: metav1.ObjectMeta{Name: "accept-2", Namespace: "other", UID: "a2"},
		Spec: transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: r1.Namespace, RequestName: "request-2", RequestToken: r2.Spec.Token}}
	w2 := &world{test: w.test, o: Observed{Request: r2, Match: match.Decide(r2, []*transferv1alpha1.StorageTransferAccept{a2}),
		SourceClaim: w.o.SourceClaim, Volume: w.o.Volume, SourceSnapshot: w.o.SourceSnapshot}}
	if w.o.SourceSnapshot != nil && w.o.SourceSnapshot.Status != nil && w.o.SourceSnapshot.Status.BoundVolumeSnapshotContentName != nil &&
		w.o.ReturnContent != nil && *w.o.SourceSnapshot.Status.BoundVolumeSnapshotContentName == w.o.ReturnContent.Name {
		w2.o.SourceContent = w.o.ReturnContent // gather: the content the source is bound to
	}
	return w2
}

// REVIEW FINDING 1 (claims). An object given back is not locked: the
// returned claim is Bound to the volume while the volume is still Retain
// (the transfer that gave it back restores the policy only after). A
// second request of the source's owner for that name (a retry, or one
// that was waiting SourceNotFound since the first deleted the source)
// begins in that window and records the transient Retain as the owner's
// policy: the volume ends Retain, under whichever claim ends up owning it,
// though its owner chose Delete (leaked when deleted).
func TestReviewASecondRequestDoesNotRecordTheRetainOfAReturnInProgress(t *testing.T) {
	w := newClaimWorld()
	w.test = t
	w.runTo(t, ActionDeleteSource)
	// The target name is taken: the volume is given back.
	w.o.TargetClaim = &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "bar", Namespace: "test", UID: "theirs"}}
	w.runTo(t, ActionReserveVolumeForSource)
	if b := w.o.SourceClaim; b == nil || b.UID != "back" || b.Status.Phase != v1.ClaimBound || w.o.Volume.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimRetain {
		t.Fatalf("Setup: source %+v, volume %+v; want the returned claim bound, the volume still Retain", b, w.o.Volume.Spec)
	}

	w2 := secondRequest(w)
	s := Next(&w2.o)
	if s.Action == ActionBegin && s.Record.OriginalReclaimPolicy != v1.PersistentVolumeReclaimDelete {
		t.Errorf("The second request begins on the returned claim while the first still holds its volume Retain, and records %q as its owner's policy (want it to wait for the first transfer, or to record Delete)",
			s.Record.OriginalReclaimPolicy)
	}
	if s.Action != ActionBegin {
		return
	}
	// Played to the end, interleaved: the first transfer restores Delete,
	// the second retains again and, at its end, "restores" Retain.
	w2.apply(s)
	w2.apply(Next(&w2.o)) // LockSource
	_, last1 := w.run()
	w2.o.SourceClaim = w.o.SourceClaim
	_, last2 := w2.run()
	t.Logf("First: %s (%s); second: %s (%s)", last1.Action, last1.Reason, last2.Action, last2.Reason)
	if p := w2.o.Volume.Spec.PersistentVolumeReclaimPolicy; p != v1.PersistentVolumeReclaimDelete {
		t.Errorf("After both transfers the volume's reclaim policy is %s; its owner chose Delete", p)
	}
}

// REVIEW FINDING 1 (snapshots): as above, with the returned snapshot's
// content, Retain until the return restores it. Worse than a leak: the
// return's RestoreDeletionPolicy (Delete) does not look at the second
// request's lock on that content; landing between the second transfer's
// plan (content Retain) and its DeleteSource, the snapshot controller
// deletes the content and the backend snapshot with the source.
func TestReviewASecondRequestDoesNotRecordTheRetainOfASnapshotReturnInProgress(t *testing.T) {
	w := newSnapshotWorld()
	w.test = t
	w.runTo(t, ActionDeleteSource)
	w.o.TargetSnapshot = &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "bar", Namespace: "test", UID: "theirs"}}
	w.runTo(t, ActionReturnSource)
	if b := w.o.SourceSnapshot; b == nil || b.UID != "back" || !snapshotReady(b, ReturnContentName(w.o.Request)) ||
		w.o.ReturnContent.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentRetain {
		t.Fatalf("Setup: source %+v, return content %+v; want the returned snapshot ready, its content still Retain", b, w.o.ReturnContent)
	}
	w2 := secondRequest(w)
	s := Next(&w2.o)
	if s.Action == ActionBegin && s.Record.OriginalDeletionPolicy != string(snapv1.VolumeSnapshotContentDelete) {
		t.Errorf("The second request begins on the returned snapshot while the first still holds its content Retain, and records %q as its owner's policy (want it to wait, or to record Delete)",
			s.Record.OriginalDeletionPolicy)
	}
}

// REVIEW FINDING 2. After the point of no return, a target claim observed
// gone is created again in the target namespace without asking whether
// that namespace still accepts: its accept is gone too. That is what a
// target namespace deleted (claim and accept with it) and created again,
// by anyone, looks like, e.g. while the source waits for its pods
// (pvc-protection) after DeleteSource. The volume is handed to a
// namespace whose accept is not the one that matched (status.acceptUID);
// observed while it was being deleted, the same target is given back.
func TestReviewATargetGoneWithItsAcceptAfterThePointOfNoReturnIsNotCreatedAgain(t *testing.T) {
	w := newClaimWorld()
	w.test = t
	w.runTo(t, ActionDeleteSource)
	// The target namespace was deleted and created again: its claim and
	// its accept are gone.
	w.o.TargetClaim = nil
	w.o.Match = match.Decide(w.o.Request, nil)
	s := Next(&w.o)
	if s.Action == ActionCreateTargetClaim || s.Action == ActionReserveVolume {
		t.Errorf("Next() = %s (%s); want the volume given back (StartReturn): no accept of the target namespace matches any more", s.Action, s.Message)
	}
}

// REVIEW FINDING 3. ours() trusts an annotation the target namespace's
// owner can write: having read the request UID on the claim this transfer
// created (its annotation), they replace that Pending claim with one of
// their own (same name, same annotation, spec.volumeName and size, but a
// class, access modes or volume mode the volume does not have) before the
// point of no return. The planner takes it for its own and deletes the
// source; the PV binder never binds the volume to that claim, so the
// transfer waits (WaitingForTarget) forever, the volume Retain with its
// claimRef on the impostor: neither namespace can use the data, and
// nothing gives it back.
func TestReviewAnImpostorTargetClaimIsNotTakenForTheTransfers(t *testing.T) {
	w := newClaimWorld()
	w.test = t
	w.runTo(t, ActionCreateTargetClaim)
	created := w.o.TargetClaim
	impostor := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: created.Name, Namespace: created.Namespace, UID: "impostor",
			Annotations: map[string]string{RequestAnnotation: created.Annotations[RequestAnnotation]}},
		Spec: v1.PersistentVolumeClaimSpec{VolumeName: "pv-1", StorageClassName: ptr.To("another-class"),
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteMany}, VolumeMode: ptr.To(v1.PersistentVolumeBlock)},
	}
	w.o.TargetClaim = impostor
	s := Next(&w.o)
	if s.Action == ActionDeleteSource {
		t.Errorf("Next() = DeleteSource with target claim %s/%s (class %q, modes %v, volumeMode %s) that the transfer did not create (want TargetConflict: its spec is not the recorded one)",
			impostor.Namespace, impostor.Name, *impostor.Spec.StorageClassName, impostor.Spec.AccessModes, *impostor.Spec.VolumeMode)
	}
}

// REVIEW FINDING 4. The source claim's lock annotation is the only mark
// of who retained its volume, and the claim's owner can edit it. With the
// lock gone (an apply that drops unknown annotations, or a hand edit) and
// the request then withdrawn, the rollback takes the volume's Retain for
// another transfer's ("mine" is false) and leaves it, though it still
// removes the finalizer as its own: the volume stays Retain, its owner
// chose Delete.
func TestReviewARollbackRestoresTheRetainItMadeThoughTheLockWasEdited(t *testing.T) {
	w := newClaimWorld()
	w.test = t
	w.runTo(t, ActionRetainVolume)
	delete(w.o.SourceClaim.Annotations, LockAnnotation) // the owner's edit
	w.o.Request.DeletionTimestamp = &metav1.Time{}      // then the withdrawal
	got, last := w.run()
	if last.Action != ActionFail || last.Reason != ReasonRequestDeleted {
		t.Fatalf("Actions %v, last %+v; want a rollback (RequestDeleted)", got, last)
	}
	if slices.Contains(w.o.SourceClaim.Finalizers, Finalizer) {
		t.Errorf("The transfer's finalizer is left on the source claim")
	}
	if p := w.o.Volume.Spec.PersistentVolumeReclaimPolicy; p != v1.PersistentVolumeReclaimDelete {
		t.Errorf("Actions %v: after the rollback the volume is %s, its owner's policy was Delete (the rollback removed its finalizer but not its Retain)", got, p)
	}
}

// REVIEW FINDING 6. Before the point of no return, a target snapshot that
// its namespace's owner deletes (it is restorable from then on, defect 17)
// is seen either being deleted (TargetConflict: rolled back) or gone: then
// it is created again on the same pre-provisioned content, whose
// volumeSnapshotRef already names the first snapshot's UID. The snapshot
// controller refuses to bind it ("bound to another VolumeSnapshot") and
// the transfer waits on that error for good, its source locked and its
// content Retain, until the source's owner withdraws.
func TestReviewATargetSnapshotDeletedBeforeThePointOfNoReturnIsNotRecreatedOnABoundContent(t *testing.T) {
	w := newSnapshotWorld()
	w.test = t
	w.runTo(t, ActionCreateTargetSnapshot)
	if ref := w.o.TargetContent.Spec.VolumeSnapshotRef; ref.UID != "t1" {
		t.Fatalf("Setup: target content ref %+v, want it bound to t1", ref)
	}
	w.o.TargetSnapshot = nil // deleted by the target's owner, and gone
	s := Next(&w.o)
	if s.Action == ActionCreateTargetSnapshot {
		t.Errorf("Next() = CreateTargetSnapshot on VolumeSnapshotContent %s, which is bound to the deleted snapshot (UID %s): the new snapshot can never bind (want a rollback, or the content replaced first)",
			w.o.TargetContent.Name, w.o.TargetContent.Spec.VolumeSnapshotRef.UID)
	}
}

// REVIEW FINDING 1 (snapshots, the race): the second request has locked
// the returned snapshot, retained its content with its own lock, built
// its target and is about to delete the source (DeleteSource, whose only
// precondition is the snapshot's UID). The first transfer's last step is
// RestoreDeletionPolicy (Delete) on that same content, blind to the
// second's lock. If it lands between the second's plan and its
// DeleteSource, the snapshot controller deletes the content under Delete,
// and the backend snapshot with it, which the second transfer's target
// content names.
func TestReviewAReturnDoesNotSetDeleteOnAContentAnotherTransferRetained(t *testing.T) {
	w := newSnapshotWorld()
	w.test = t
	w.runTo(t, ActionDeleteSource)
	w.o.TargetSnapshot = &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "bar", Namespace: "test", UID: "theirs"}}
	w.runTo(t, ActionDeleteSourceContent)
	w2 := secondRequest(w)
	if s := Next(&w2.o); s.Action != ActionBegin {
		t.Logf("The second request does not begin while the return holds the snapshot: %s (%s)", s.Action, s.Reason)
		return
	}
	for _, want := range []Action{ActionBegin, ActionLockSource, ActionRetainSourceContent, ActionCreateTargetContent, ActionCreateTargetSnapshot} {
		s := Next(&w2.o)
		if s.Action != want {
			t.Fatalf("Second request: Next() = %+v, want %s", s, want)
		}
		w2.apply(s)
	}
	second, first := Next(&w2.o), Next(&w.o)
	content := w.o.ReturnContent
	t.Logf("Second request: %s; first: %s; content %s locked by %q", second.Action, first.Action, content.Name, lockHolder(content))
	if second.Action == ActionDeleteSource && first.Action == ActionRestoreDeletionPolicy {
		t.Errorf("The first transfer sets VolumeSnapshotContent %s (locked by the second, %q) to Delete while the second deletes its snapshot: the backend snapshot %s can go with it",
			content.Name, lockHolder(content), w.o.Request.Status.Record.SnapshotHandle)
	}
}

// REVIEW FINDING 8 (of the fix b7cf05f, not of fc38ec2). Once the volume
// is bound to the target claim, that claim is its owner's to use: they
// may resize it (spec.resources.requests) at once, before the controller
// restores the reclaim policy. A bound, live target whose spec is no
// longer the recorded one must still be handed over; taken for "not ours"
// it is treated as deleted: the transfer starts a give-back and then
// waits, for good, for the target owner's claim (bound, in use) to be
// deleted, the volume left Retain; if its owner ever deletes it, the
// volume goes back to the source namespace.
func TestReviewABoundTargetResizedByItsOwnerIsStillHandedOver(t *testing.T) {
	w := newClaimWorld()
	w.test = t
	w.runTo(t, ActionReserveVolume)
	tc := w.o.TargetClaim
	if tc == nil || tc.Status.Phase != v1.ClaimBound || w.o.Volume.Spec.ClaimRef.UID != tc.UID {
		t.Fatalf("Setup: target %+v, volume %+v; want the target claim bound", tc, w.o.Volume.Spec.ClaimRef)
	}
	tc.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse("20Gi")} // the target's owner resizes it
	got, last := w.run()
	if last.Action != ActionComplete || w.o.Request.Status.Record.Returning {
		t.Errorf("Actions %v, last %s (%s: %s); want the bound target handed over (Complete), not a give-back", got, last.Action, last.Reason, last.Message)
	}
}

// REVIEW FINDING 9 (of the fix b7cf05f). DeleteSource records the source's
// spec as it is then; targetClaimOurs compares the target claim, created
// earlier from the spec of that time, with it. A source claim whose
// volumeAttributesClassName its owner changes (mutable on a bound claim)
// after the target claim was created makes the transfer's own target
// claim "not ours" after the point of no return: a transfer both sides
// agreed to is given back, and its target deleted.
func TestReviewASourceModifiedBeforeItsDeletionDoesNotDisownTheTarget(t *testing.T) {
	w := newClaimWorld()
	w.test = t
	w.runTo(t, ActionCreateTargetClaim)
	w.o.SourceClaim.Spec.VolumeAttributesClassName = ptr.To("fast") // its owner modifies the volume
	got, last := w.run()
	if last.Action != ActionComplete {
		t.Errorf("Actions %v, last %s (%s: %s); want the transfer completed with the target claim this transfer created", got, last.Action, last.Reason, last.Message)
	}
}

// REVIEW FINDING 10 (explorer, TRANSFER_EXPLORE_PERTURBATIONS=2:
// 'claim: sync; sync; sync; sync; sync lost-answer=0; move delete-request:move').
// pointOfNoReturn is written ahead of the deletion it announces. The
// controller dies (or loses the answer) after writing DeleteSource's
// record and before deleting the source; its owner then withdraws (deletes
// the request, or the source and the request together, or the accept is
// deleted). The record says the point is passed, so the withdrawal is
// ignored: the intact source is deleted and handed over without consent.
func TestReviewAWithdrawalAfterTheRecordButBeforeTheDeletionIsHonoured(t *testing.T) {
	for name, world := range map[string]func() *world{"claim": newClaimWorld, "snapshot": newSnapshotWorld} {
		t.Run(name, func(t *testing.T) {
			w := world()
			w.test = t
			for s := Next(&w.o); s.Action != ActionDeleteSource; s = Next(&w.o) {
				if !w.apply(s) || s.Action == ActionFail || s.Action == ActionNone && s.Record == nil {
					t.Fatalf("Setup: %+v before DeleteSource", s)
				}
			}
			s := Next(&w.o)
			w.o.Request.Status.Record = s.Record.DeepCopy() // recorded; the controller dies before deleting
			w.o.Request.DeletionTimestamp = &metav1.Time{}  // its owner withdraws
			if next := Next(&w.o); next.Action == ActionDeleteSource {
				t.Errorf("Next() = DeleteSource of the intact source of a deleted request (the record says pointOfNoReturn, yet nothing was deleted); want a rollback")
			}
		})
	}
}
