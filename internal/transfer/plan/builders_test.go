package plan

import (
	"slices"
	"strings"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/transfer/match"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// world is a transfer's objects as the controller observes them, with
// just enough of the snapshot controller and the PV binder to play a
// transfer through: apply takes an action as the controller would, settle
// what those controllers then do.
type world struct {
	o       Observed
	deleted bool // the accept was deleted
	test    *testing.T
}

// t is the test a table case runs in.
func (w *world) t() *testing.T { return w.test }

func newSnapshotWorld() *world {
	r := &transferv1alpha1.StorageTransferRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "request-name", Namespace: "prod", UID: "r1"},
		Spec: transferv1alpha1.StorageTransferRequestSpec{Source: transferv1alpha1.TransferSource{Kind: transferv1alpha1.KindVolumeSnapshot, Name: "foo"},
			AcceptName: "accept-name", TargetName: "bar", Token: "dG9rZW4tdG9rZW4tdG9rZW4"},
	}
	a := &transferv1alpha1.StorageTransferAccept{ObjectMeta: metav1.ObjectMeta{Name: "accept-name", Namespace: "test", UID: "a1"},
		Spec: transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: "prod", RequestName: "request-name", RequestToken: r.Spec.Token}}
	src := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: "prod", UID: "s1"},
		Spec:   snapv1.VolumeSnapshotSpec{VolumeSnapshotClassName: ptr.To("csi-snapclass"), Source: snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr.To("data")}},
		Status: &snapv1.VolumeSnapshotStatus{ReadyToUse: ptr.To(true), BoundVolumeSnapshotContentName: ptr.To("snapcontent-s1")}}
	content := &snapv1.VolumeSnapshotContent{ObjectMeta: metav1.ObjectMeta{Name: "snapcontent-s1"},
		Spec: snapv1.VolumeSnapshotContentSpec{VolumeSnapshotRef: v1.ObjectReference{Namespace: "prod", Name: "foo", UID: "s1"},
			DeletionPolicy: snapv1.VolumeSnapshotContentDelete, Driver: "local.csi", Source: snapv1.VolumeSnapshotContentSource{VolumeHandle: ptr.To("vol-1")}},
		Status: &snapv1.VolumeSnapshotContentStatus{SnapshotHandle: ptr.To("snap-1"), ReadyToUse: ptr.To(true)}}
	w := &world{o: Observed{Request: r, SourceSnapshot: src, SourceContent: content}}
	w.o.Match = match.Decide(r, []*transferv1alpha1.StorageTransferAccept{a})
	return w
}

func newClaimWorld() *world {
	w := newSnapshotWorld()
	w.o.Request.Spec.Source = transferv1alpha1.TransferSource{Kind: transferv1alpha1.KindPersistentVolumeClaim, Name: "data"}
	w.o.SourceSnapshot, w.o.SourceContent = nil, nil
	w.o.SourceClaim = &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "prod", UID: "c1", Finalizers: []string{"kubernetes.io/pvc-protection"}},
		Spec:   v1.PersistentVolumeClaimSpec{VolumeName: "pv-1", StorageClassName: ptr.To("csi")},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound}}
	w.o.Volume = &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"},
		Spec: v1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			ClaimRef: &v1.ObjectReference{Namespace: "prod", Name: "data", UID: "c1"}}}
	return w
}

// apply takes step s as the controller does, then lets the snapshot
// controller and the PV binder settle. It returns false for an action it
// does not know.
func (w *world) apply(s Step) bool {
	o := &w.o
	r := o.Request
	if s.Record != nil {
		r.Status.Record = s.Record.DeepCopy()
	}
	r.Status.Phase = s.Phase
	targetNS := TargetNamespace(o)
	if s.Phase == transferv1alpha1.PhaseTransferring && r.Status.TargetNamespace == "" {
		r.Status.TargetNamespace, r.Status.AcceptUID = targetNS, string(o.Match.Accept.UID)
	}
	owned := metav1.ObjectMeta{Annotations: map[string]string{RequestAnnotation: string(r.UID)}}
	switch s.Action {
	case ActionNone, ActionBegin, ActionStartRollback, ActionStartReturn, ActionComplete, ActionFail:
	case ActionLockSource:
		if o.SourceSnapshot != nil {
			setAnn(&o.SourceSnapshot.ObjectMeta, LockAnnotation, string(r.UID))
		} else {
			setAnn(&o.SourceClaim.ObjectMeta, LockAnnotation, string(r.UID))
			o.SourceClaim.Finalizers = append(o.SourceClaim.Finalizers, Finalizer)
		}
	case ActionUnlockSource:
		if o.SourceSnapshot != nil {
			delete(o.SourceSnapshot.Annotations, LockAnnotation)
		} else if !lockedByOther(o.SourceClaim, r) {
			delete(o.SourceClaim.Annotations, LockAnnotation)
			o.SourceClaim.Finalizers = slices.DeleteFunc(o.SourceClaim.Finalizers, func(f string) bool { return f == Finalizer })
		}
	case ActionRetainSourceContent:
		o.SourceContent.Spec.DeletionPolicy = snapv1.VolumeSnapshotContentRetain
		setAnn(&o.SourceContent.ObjectMeta, LockAnnotation, string(r.UID))
	case ActionRestoreSourceDeletionPolicy:
		o.SourceContent.Spec.DeletionPolicy = snapv1.DeletionPolicy(r.Status.Record.OriginalDeletionPolicy)
		delete(o.SourceContent.Annotations, LockAnnotation)
	case ActionCreateTargetContent:
		c := &snapv1.VolumeSnapshotContent{ObjectMeta: *owned.DeepCopy(), Spec: snapv1.VolumeSnapshotContentSpec{
			VolumeSnapshotRef: v1.ObjectReference{Namespace: targetNS, Name: r.Spec.TargetName},
			DeletionPolicy:    snapv1.VolumeSnapshotContentRetain, Driver: r.Status.Record.Driver,
			Source: snapv1.VolumeSnapshotContentSource{SnapshotHandle: ptr.To(r.Status.Record.SnapshotHandle)}}}
		c.Name = r.Status.Record.TargetContentName
		o.TargetContent = c
	case ActionCreateTargetSnapshot:
		t := &snapv1.VolumeSnapshot{ObjectMeta: *owned.DeepCopy(), Spec: snapv1.VolumeSnapshotSpec{
			Source: snapv1.VolumeSnapshotSource{VolumeSnapshotContentName: ptr.To(r.Status.Record.TargetContentName)}}}
		t.Name, t.Namespace, t.UID = r.Spec.TargetName, targetNS, "t1"
		o.TargetSnapshot = t
	case ActionDeleteSource:
		if o.SourceSnapshot != nil {
			o.SourceSnapshot = nil // the snapshot controller removes its finalizers at once
		} else {
			o.SourceClaim.DeletionTimestamp = &metav1.Time{}
		}
	case ActionDeleteSourceContent:
		o.SourceContent = nil
	case ActionDeleteTargetSnapshot:
		o.TargetSnapshot = nil
	case ActionDeleteTargetContent:
		o.TargetContent = nil
	case ActionRestoreDeletionPolicy:
		if r.Status.Record.Returning {
			o.ReturnContent.Spec.DeletionPolicy = snapv1.DeletionPolicy(r.Status.Record.OriginalDeletionPolicy)
		} else {
			o.TargetContent.Spec.DeletionPolicy = snapv1.DeletionPolicy(r.Status.Record.OriginalDeletionPolicy)
		}
	case ActionCreateReturnContent:
		c := &snapv1.VolumeSnapshotContent{ObjectMeta: *owned.DeepCopy(), Spec: snapv1.VolumeSnapshotContentSpec{
			VolumeSnapshotRef: v1.ObjectReference{Namespace: r.Namespace, Name: r.Spec.Source.Name},
			DeletionPolicy:    snapv1.VolumeSnapshotContentRetain, Driver: r.Status.Record.Driver,
			Source: snapv1.VolumeSnapshotContentSource{SnapshotHandle: ptr.To(r.Status.Record.SnapshotHandle)}}}
		c.Name = ReturnContentName(r)
		o.ReturnContent = c
	case ActionReturnSource:
		if r.Spec.Source.Kind == transferv1alpha1.KindVolumeSnapshot {
			b := &snapv1.VolumeSnapshot{ObjectMeta: *owned.DeepCopy(), Spec: snapv1.VolumeSnapshotSpec{
				Source: snapv1.VolumeSnapshotSource{VolumeSnapshotContentName: ptr.To(ReturnContentName(r))}}}
			b.Name, b.Namespace, b.UID = r.Spec.Source.Name, r.Namespace, "back"
			setAnn(&b.ObjectMeta, LockAnnotation, string(r.UID))
			o.SourceSnapshot = b
		} else {
			b := &v1.PersistentVolumeClaim{ObjectMeta: *owned.DeepCopy(), Spec: *r.Status.Record.ClaimSpec.DeepCopy()}
			b.Name, b.Namespace, b.UID = r.Spec.Source.Name, r.Namespace, "back"
			b.Spec.VolumeName = r.Status.Record.VolumeName
			setAnn(&b.ObjectMeta, LockAnnotation, string(r.UID))
			b.Finalizers = []string{Finalizer}
			o.SourceClaim = b
		}
	case ActionReserveVolumeForSource:
		o.Volume.Spec.ClaimRef = &v1.ObjectReference{Namespace: o.SourceClaim.Namespace, Name: o.SourceClaim.Name, UID: o.SourceClaim.UID}
	case ActionDeleteTargetClaim:
		o.TargetClaim = nil
	case ActionRetainVolume:
		o.Volume.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimRetain
	case ActionRestoreReclaimPolicy:
		o.Volume.Spec.PersistentVolumeReclaimPolicy = r.Status.Record.OriginalReclaimPolicy
	case ActionReserveVolume:
		o.Volume.Spec.ClaimRef = &v1.ObjectReference{Namespace: targetNS, Name: r.Spec.TargetName, UID: o.TargetClaim.UID}
	case ActionCreateTargetClaim:
		c := &v1.PersistentVolumeClaim{ObjectMeta: *owned.DeepCopy(), Spec: *r.Status.Record.ClaimSpec.DeepCopy()}
		c.Name, c.Namespace, c.UID = r.Spec.TargetName, targetNS, "c2"
		o.TargetClaim = c
	case ActionReleaseSource:
		o.SourceClaim.Finalizers = slices.DeleteFunc(o.SourceClaim.Finalizers, func(f string) bool { return f == Finalizer })
	default:
		return false
	}
	w.settle()
	return true
}

// settle plays the snapshot controller and the PV binder.
func (w *world) settle() {
	o := &w.o
	if t := o.TargetSnapshot; t != nil && o.TargetContent != nil && t.Status == nil {
		t.Status = &snapv1.VolumeSnapshotStatus{ReadyToUse: ptr.To(true), BoundVolumeSnapshotContentName: ptr.To(o.TargetContent.Name)}
		o.TargetContent.Spec.VolumeSnapshotRef.UID = t.UID
	}
	if c := o.SourceClaim; c != nil && c.DeletionTimestamp != nil {
		if len(o.Pods) == 0 {
			c.Finalizers = slices.DeleteFunc(c.Finalizers, func(f string) bool { return f == "kubernetes.io/pvc-protection" })
		}
		if len(c.Finalizers) == 0 {
			o.SourceClaim = nil
		}
	}
	if v := o.Volume; v != nil && v.Spec.ClaimRef != nil && v.Spec.ClaimRef.UID == "" {
		v.Status.Phase = v1.VolumeAvailable // pre-bound
	}
	for _, c := range []*v1.PersistentVolumeClaim{o.TargetClaim, o.SourceClaim} {
		if o.Volume == nil || c == nil {
			continue
		}
		if ref := o.Volume.Spec.ClaimRef; ref != nil && c.Spec.VolumeName == o.Volume.Name &&
			ref.Namespace == c.Namespace && ref.Name == c.Name && (ref.UID == "" || ref.UID == c.UID) {
			ref.UID = c.UID
			c.Status.Phase = v1.ClaimBound
		}
	}
	if b := o.SourceSnapshot; b != nil && o.ReturnContent != nil && b.Status == nil && b.UID == "back" {
		b.Status = &snapv1.VolumeSnapshotStatus{ReadyToUse: ptr.To(true), BoundVolumeSnapshotContentName: ptr.To(o.ReturnContent.Name)}
		o.ReturnContent.Spec.VolumeSnapshotRef.UID = b.UID
	}
}

func setAnn(m *metav1.ObjectMeta, k, v string) {
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[k] = v
}

// run plans and applies steps until the transfer ends or waits, at most
// 30 steps, and returns the actions taken, the last step included.
func (w *world) run() ([]Action, Step) {
	var actions []Action
	for range 30 {
		s := Next(&w.o)
		if s.Action == ActionNone && s.Record == nil {
			return actions, s
		}
		actions = append(actions, s.Action)
		if !w.apply(s) || s.Action == ActionComplete || s.Action == ActionFail {
			return actions, s
		}
	}
	return actions, Step{}
}

// checkLeftToItsDeletion checks that a transfer whose source its owner
// deleted before the transfer protected it ends there, undoing only what
// it made, rather than race the controller deleting it.
func checkLeftToItsDeletion(t *testing.T, w *world) {
	t.Helper()
	got, last := w.run()
	if last.Action != ActionFail || last.Reason != ReasonSourceDeletedBefore {
		t.Errorf("Actions %v, last %+v, want Fail (%s), not a race to retain what is being deleted", got, last, ReasonSourceDeletedBefore)
	}
	for _, a := range got {
		switch a {
		case ActionRetainVolume, ActionRetainSourceContent, ActionCreateTargetClaim, ActionCreateTargetContent, ActionCreateTargetSnapshot, ActionDeleteSource, ActionDeleteSourceContent:
			t.Errorf("Actions %v: %s after its owner deleted the source", got, a)
		}
	}
}

// checkReturned checks that the transfer ended saying it gave the object
// back.
func checkReturned(t *testing.T, last Step) {
	t.Helper()
	if last.Action != ActionFail || last.Reason != ReasonReturned || !strings.Contains(last.Message, "given back") {
		t.Errorf("Last step %+v, want Fail (%s) saying the object was given back", last, ReasonReturned)
	}
}

// checkSnapshotGivenBack checks that the snapshot is back under its name
// in the source namespace, on the same backend snapshot under the
// original policy, and the transfer says so.
func checkSnapshotGivenBack(t *testing.T, w *world, last Step) {
	t.Helper()
	o := w.o
	checkReturned(t, last)
	b := o.SourceSnapshot
	if b == nil || b.UID != "back" || !snapshotReady(b, ReturnContentName(o.Request)) {
		t.Fatalf("Source snapshot = %+v, want prod/foo again, ready and bound to %s", b, ReturnContentName(o.Request))
	}
	if c := o.ReturnContent; snapshotHandle(c) != "snap-1" || c.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentDelete {
		t.Errorf("Return content = %+v, want snap-1 under Delete", c.Spec)
	}
	if o.SourceContent != nil {
		t.Errorf("The old source content is still there: %+v", o.SourceContent)
	}
	if o.TargetContent != nil && ours(o.TargetContent, o.Request) {
		t.Errorf("The target content this transfer made is still there: %+v", o.TargetContent)
	}
}

// checkClaimGivenBack checks that the volume is bound to a claim under the
// source's name in the source namespace, under its original policy, and
// the transfer says so.
func checkClaimGivenBack(t *testing.T, w *world, last Step) {
	t.Helper()
	o := w.o
	checkReturned(t, last)
	b := o.SourceClaim
	if b == nil || b.UID != "back" || b.Namespace != "prod" || b.Name != "data" || b.Status.Phase != v1.ClaimBound || b.Spec.VolumeName != "pv-1" {
		t.Fatalf("Source claim = %+v, want prod/data again, bound to pv-1", b)
	}
	if ref := o.Volume.Spec.ClaimRef; ref.UID != b.UID {
		t.Errorf("PV claimRef = %+v, want prod/data", ref)
	}
	if o.Volume.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete {
		t.Errorf("Reclaim policy = %s, want the original Delete", o.Volume.Spec.PersistentVolumeReclaimPolicy)
	}
	if o.TargetClaim != nil && ours(o.TargetClaim, o.Request) {
		t.Errorf("The target claim this transfer made is still there: %+v", o.TargetClaim)
	}
}

// uid converts for the table tests.
func uid(s string) types.UID { return types.UID(s) }
