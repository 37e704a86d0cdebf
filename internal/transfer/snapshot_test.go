package transfer

import (
	"strings"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// readySnapshot is prod/foo, ready, bound to snapcontent-s1 (Delete) of
// backend snapshot snap-1.
func readySnapshot() []runtime.Object {
	return []runtime.Object{
		&snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: "prod", UID: "s1"},
			Spec:   snapv1.VolumeSnapshotSpec{VolumeSnapshotClassName: ptr.To("csi-snapclass"), Source: snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr.To("data")}},
			Status: &snapv1.VolumeSnapshotStatus{ReadyToUse: ptr.To(true), BoundVolumeSnapshotContentName: ptr.To("snapcontent-s1")}},
		&snapv1.VolumeSnapshotContent{ObjectMeta: metav1.ObjectMeta{Name: "snapcontent-s1", UID: "sc1"},
			Spec: snapv1.VolumeSnapshotContentSpec{VolumeSnapshotRef: v1.ObjectReference{Namespace: "prod", Name: "foo", UID: "s1"},
				DeletionPolicy: snapv1.VolumeSnapshotContentDelete, Driver: "local.csi", Source: snapv1.VolumeSnapshotContentSource{VolumeHandle: ptr.To("vol-1")}},
			Status: &snapv1.VolumeSnapshotContentStatus{SnapshotHandle: ptr.To("snap-1"), ReadyToUse: ptr.To(true)}},
	}
}

func TestSnapshotTransferCompletesAndIsRetired(t *testing.T) {
	h := newHarness(t, nil, readySnapshot())
	h.createRequestAndAccept(transferv1alpha1.KindVolumeSnapshot, "foo", "")
	h.waitFor("the request and accept to be deleted after the transfer", func() bool {
		_, err := h.api.TransferV1alpha1().StorageTransferAccepts("test").Get(h.ctx, "accept-name", metav1.GetOptions{})
		return h.request() == nil && err != nil
	})
	snaps := h.snap.SnapshotV1()
	if _, err := snaps.VolumeSnapshots("prod").Get(h.ctx, "foo", metav1.GetOptions{}); err == nil {
		t.Error("The source VolumeSnapshot is still there")
	}
	if _, err := snaps.VolumeSnapshotContents().Get(h.ctx, "snapcontent-s1", metav1.GetOptions{}); err == nil {
		t.Error("The source content is still there")
	}
	target, err := snaps.VolumeSnapshots("test").Get(h.ctx, "bar", metav1.GetOptions{})
	if err != nil || *target.Spec.Source.VolumeSnapshotContentName != "snapcontent-transfer-r1" || *target.Spec.VolumeSnapshotClassName != "csi-snapclass" {
		t.Fatalf("Target snapshot = %+v, %v; want test/bar bound to snapcontent-transfer-r1 of class csi-snapclass", target, err)
	}
	content, err := snaps.VolumeSnapshotContents().Get(h.ctx, "snapcontent-transfer-r1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *content.Spec.Source.SnapshotHandle != "snap-1" || content.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentDelete ||
		content.Spec.VolumeSnapshotRef.Namespace != "test" || content.Spec.VolumeSnapshotRef.Name != "bar" || content.Annotations[plan.RequestAnnotation] != "r1" {
		t.Errorf("Target content = %+v, want snap-1 under Delete, bound to test/bar, annotated with the request", content)
	}
	events := h.eventsSoFar()
	checkNoEventQuotesTheToken(t, events)
	if !containsPrefix(events, "Normal Completed") || !containsPrefix(events, "Normal TransferRetired") {
		t.Errorf("Events = %q, want Completed and TransferRetired", events)
	}
}

func TestSnapshotTransferWithAWrongTokenChangesNothing(t *testing.T) {
	h := newHarness(t, nil, readySnapshot())
	h.createRequestAndAccept(transferv1alpha1.KindVolumeSnapshot, "foo", "d3JvbmctdG9rZW4tMTIzNDU2")
	h.waitFor("the accept to be told", func() bool {
		a, err := h.api.TransferV1alpha1().StorageTransferAccepts("test").Get(h.ctx, "accept-name", metav1.GetOptions{})
		return err == nil && len(a.Status.Conditions) > 0 && a.Status.Conditions[0].Reason == "RequestNotFound"
	})
	if r := h.request(); r.Status.Phase != transferv1alpha1.PhasePending || r.Status.Record != nil {
		t.Errorf("Request status = %+v, want Pending without record", r.Status)
	}
	s, _ := h.snap.SnapshotV1().VolumeSnapshots("prod").Get(h.ctx, "foo", metav1.GetOptions{})
	if len(s.Annotations) != 0 {
		t.Errorf("The source was touched: %v", s.Annotations)
	}
	checkNoEventQuotesTheToken(t, h.eventsSoFar())
}

func TestSnapshotTransferWaitsForATakenTargetName(t *testing.T) {
	objs := append(readySnapshot(), &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "bar", Namespace: "test", UID: "other"}})
	h := newHarness(t, nil, objs)
	h.createRequestAndAccept(transferv1alpha1.KindVolumeSnapshot, "foo", "")
	h.waitFor("TargetNameTaken", func() bool { return h.transferredReason() == plan.ReasonTargetNameTaken })
	if r := h.request(); r.Status.Phase != transferv1alpha1.PhaseMatched || r.Status.Record != nil {
		t.Errorf("Request status = %+v, want Matched without record", r.Status)
	}
}

func containsPrefix(events []string, prefix string) bool {
	for _, e := range events {
		if len(e) >= len(prefix) && e[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}

func TestWaitsAreToldOnceAndForgottenWithTheRequest(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.createRequestAndAccept(transferv1alpha1.KindVolumeSnapshot, "missing", "")
	h.waitFor("SourceNotFound", func() bool { return h.transferredReason() == plan.ReasonSourceNotFound })
	count := func(events []string) (n int) {
		for _, e := range events {
			if strings.Contains(e, plan.ReasonSourceNotFound) {
				n++
			}
		}
		return n
	}
	if n := count(h.eventsSoFar()); n != 1 {
		t.Errorf("%d SourceNotFound events, want 1", n)
	}
	if err := h.api.TransferV1alpha1().StorageTransferRequests("prod").Delete(h.ctx, "request-name", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the request to be forgotten", func() bool {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		_, told := h.c.told["r1"]
		return !told
	})
}
