package plan

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/transfer/match"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// claimSteps: the target claim is created, Pending, before the source is
// deleted (the target namespace's admission answers, and the name is
// taken, while nothing is lost), and the volume bound to it after.
var claimSteps = []Action{ActionBegin, ActionLockSource, ActionRetainVolume, ActionCreateTargetClaim, ActionDeleteSource,
	ActionReserveVolume, ActionRestoreReclaimPolicy, ActionReleaseSource, ActionComplete}

func checkClaimTransferred(t *testing.T, w *world) {
	t.Helper()
	o := w.o
	if o.SourceClaim != nil {
		t.Errorf("The source claim is still there: %+v", o.SourceClaim)
	}
	tc := o.TargetClaim
	if tc == nil || tc.Namespace != "test" || tc.Name != "bar" || tc.Spec.VolumeName != "pv-1" || tc.Status.Phase != v1.ClaimBound {
		t.Fatalf("Target claim = %+v, want test/bar bound to pv-1", tc)
	}
	if ref := o.Volume.Spec.ClaimRef; ref.Namespace != "test" || ref.Name != "bar" || ref.UID != tc.UID {
		t.Errorf("PV claimRef = %+v, want test/bar", ref)
	}
	if o.Volume.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete {
		t.Errorf("Reclaim policy = %s, want the original Delete", o.Volume.Spec.PersistentVolumeReclaimPolicy)
	}
}

func TestClaimTransferTakesTheSeedsSteps(t *testing.T) {
	w := newClaimWorld()
	got, last := w.run()
	if !slices.Equal(got, claimSteps) {
		t.Fatalf("Actions = %v, want %v (last step %+v)", got, claimSteps, last)
	}
	checkClaimTransferred(t, w)
}

func TestClaimTransferFinishesAfterACrashAtEveryStep(t *testing.T) {
	checkCrashAtEveryStep(t, newClaimWorld, claimSteps, checkClaimTransferred)
}

func TestClaimUsedByAPodWaits(t *testing.T) {
	w := newClaimWorld()
	w.o.Pods = []string{"app-0"}
	if s := Next(&w.o); s.Action != ActionNone || s.Reason != ReasonSourceInUse || s.Phase != transferv1alpha1.PhaseMatched {
		t.Fatalf("Before the transfer: %+v, want a SourceInUse wait", s)
	}
	// A pod that starts once the transfer has begun holds it before the
	// claim is deleted, while it can still be withdrawn.
	w.o.Pods = nil
	w.apply(Next(&w.o))
	w.o.Pods = []string{"app-1"}
	got, last := w.run()
	if !slices.Equal(got, []Action{ActionLockSource, ActionRetainVolume}) || last.Reason != ReasonSourceInUse || w.o.SourceClaim.DeletionTimestamp != nil {
		t.Fatalf("With a pod: %v then %+v, want lock, retain, then a SourceInUse wait with the claim not deleted", got, last)
	}
	w.o.Pods = nil
	w.run()
	checkClaimTransferred(t, w)
}

func TestClaimTransferRollsBackWhenTheRequestIsDeletedBeforeTheSourceIs(t *testing.T) {
	for k := 1; k < slices.Index(claimSteps, ActionDeleteSource); k++ {
		t.Run("after "+string(claimSteps[k-1]), func(t *testing.T) {
			w := newClaimWorld()
			for range k {
				w.apply(Next(&w.o))
			}
			w.o.Request.DeletionTimestamp = &metav1.Time{}
			_, last := w.run()
			if last.Action != ActionFail || last.Reason != ReasonRequestDeleted {
				t.Fatalf("Last step %+v, want Fail (RequestDeleted)", last)
			}
			src := w.o.SourceClaim
			if src == nil || src.DeletionTimestamp != nil || lockHolder(src) != "" || slices.Contains(src.Finalizers, Finalizer) {
				t.Errorf("Source claim not restored: %+v", src)
			}
			if w.o.Volume.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete || w.o.Volume.Spec.ClaimRef.UID != "c1" {
				t.Errorf("Volume not restored: %+v", w.o.Volume.Spec)
			}
		})
	}
}

func TestClaimRefusals(t *testing.T) {
	tests := map[string]struct {
		change     func(w *world)
		wantReason string
	}{
		"source not found waits":   {func(w *world) { w.o.SourceClaim = nil }, ReasonSourceNotFound},
		"an unbound claim waits":   {func(w *world) { w.o.SourceClaim.Status.Phase = v1.ClaimPending }, ReasonSourceNotReady},
		"a volume bound elsewhere": {func(w *world) { w.o.Volume.Spec.ClaimRef.UID = uid("c0") }, ReasonBoundElsewhere},
		"source locked by another": {func(w *world) { setAnn(&w.o.SourceClaim.ObjectMeta, LockAnnotation, "other") }, ReasonSourceLocked},
		"target name taken": {func(w *world) {
			w.o.TargetClaim = &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "bar", Namespace: "test"}}
		}, ReasonTargetNameTaken},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := newClaimWorld()
			tc.change(w)
			if s := Next(&w.o); s.Action != ActionNone || s.Reason != tc.wantReason || s.Message == "" {
				t.Errorf("Next() = %+v, want a %s wait with a message", s, tc.wantReason)
			}
		})
	}
}

func TestClaimTransferStopsWhenTheVolumeIsTakenAfterThePointOfNoReturn(t *testing.T) {
	w := newClaimWorld()
	for range slices.Index(claimSteps, ActionDeleteSource) + 1 {
		w.apply(Next(&w.o))
	}
	w.o.Match = match.Decide(w.o.Request, nil)
	w.o.Volume.Spec.ClaimRef = &v1.ObjectReference{Namespace: "other", Name: "thief", UID: "x"}
	if s := Next(&w.o); s.Action != ActionNone || s.Reason != ReasonBoundElsewhere {
		t.Errorf("Next() = %+v, want a BoundToUnexpectedObject wait", s)
	}
}

func TestClaimTransferFailsWhenItsOwnerDeletesTheSourceBeforeItIsHeld(t *testing.T) {
	tests := map[string]func(w *world){
		"the claim is being deleted": func(w *world) { w.o.SourceClaim.DeletionTimestamp = &metav1.Time{} },
		"the claim is gone":          func(w *world) { w.o.SourceClaim = nil },
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			w := newClaimWorld()
			w.apply(Next(&w.o)) // Begin
			change(w)
			// Nothing holds the volume bound: the PV controller reclaims
			// it as its Delete policy says, and retaining it would race.
			checkLeftToItsDeletion(t, w)
		})
	}
}

func TestClaimTransferRollsForwardWhenItsOwnerDeletesTheSourceOnceItIsHeld(t *testing.T) {
	w := newClaimWorld()
	for range slices.Index(claimSteps, ActionLockSource) + 1 {
		w.apply(Next(&w.o))
	}
	w.o.SourceClaim.DeletionTimestamp = &metav1.Time{}
	w.settle() // pvc-protection goes, the transfer's finalizer holds it
	w.run()
	checkClaimTransferred(t, w)
}

func TestClaimResizedDuringTheTransferKeepsItsNewSize(t *testing.T) {
	w := newClaimWorld()
	w.o.SourceClaim.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}
	w.o.Volume.Spec.Capacity = v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}
	for range slices.Index(claimSteps, ActionRetainVolume) + 1 {
		w.apply(Next(&w.o))
	}
	w.o.SourceClaim.Spec.Resources.Requests[v1.ResourceStorage] = resource.MustParse("2Gi")
	if s := Next(&w.o); s.Action != ActionNone || s.Reason != ReasonSourceNotReady {
		t.Fatalf("While the volume is smaller than asked: %+v, want a SourceNotReady wait (a target claim asking 2Gi of a 1Gi volume is never bound)", s)
	}
	w.o.Volume.Spec.Capacity[v1.ResourceStorage] = resource.MustParse("2Gi")
	w.run()
	checkClaimTransferred(t, w)
	if got := w.o.TargetClaim.Spec.Resources.Requests[v1.ResourceStorage]; got.String() != "2Gi" {
		t.Errorf("Target claim asks for %s, want the resized 2Gi", got.String())
	}
}

func TestClaimResizedAfterItsTargetWasCreatedGetsANewTarget(t *testing.T) {
	w := newClaimWorld()
	w.o.SourceClaim.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}
	w.o.Volume.Spec.Capacity = v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}
	for range slices.Index(claimSteps, ActionCreateTargetClaim) + 1 {
		w.apply(Next(&w.o))
	}
	w.o.SourceClaim.Spec.Resources.Requests[v1.ResourceStorage] = resource.MustParse("2Gi")
	w.o.Volume.Spec.Capacity[v1.ResourceStorage] = resource.MustParse("2Gi")
	got, _ := w.run()
	if !slices.Contains(got, ActionDeleteTargetClaim) || slices.Index(got, ActionDeleteTargetClaim) > slices.Index(got, ActionDeleteSource) {
		t.Errorf("Actions = %v, want the Pending target claim of the old size replaced before the source is deleted", got)
	}
	checkClaimTransferred(t, w)
	if got := w.o.TargetClaim.Spec.Resources.Requests[v1.ResourceStorage]; got.String() != "2Gi" {
		t.Errorf("Target claim asks for %s, want the resized 2Gi", got.String())
	}
}
