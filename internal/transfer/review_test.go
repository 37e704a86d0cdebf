package transfer

// Adversarial review of fc38ec2, controller level. Each test here failed
// on the controller when it was written.

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// REVIEW FINDING 5. A claim used by several pods waits (SourceInUse) with
// a message that names them in the order of the pod informer's index (a
// Go map: ByIndex iterates a set). The same world gives another message
// from one sync to the next, so writeStatus writes the status again, which
// queues the request again, and tellOnce tells a new event each time: a
// burst of status writes and events at every look (every 30 s and every
// event) for as long as the pods run. Seen in the harness: 23 to 100
// SourceInUse events, 35 status writes in 2 s, for one wait.
func TestReviewTheSameWorldGivesTheSameWaitingMessage(t *testing.T) {
	c := unstarted(t, record.NewFakeRecorder(10))
	for _, obj := range boundClaim() {
		switch o := obj.(type) {
		case *v1.PersistentVolumeClaim:
			_ = c.claims.GetIndexer().Add(o)
		case *v1.PersistentVolume:
			_ = c.volumes.GetIndexer().Add(o)
		}
	}
	for i := range 6 {
		_ = c.pods.GetIndexer().Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%d", i), Namespace: "prod"},
			Spec: v1.PodSpec{Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}},
			Status: v1.PodStatus{Phase: v1.PodRunning}})
	}
	r := &transferv1alpha1.StorageTransferRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "request-name", Namespace: "prod", UID: "r1"},
		Spec: transferv1alpha1.StorageTransferRequestSpec{Source: transferv1alpha1.TransferSource{Kind: transferv1alpha1.KindPersistentVolumeClaim, Name: "data"},
			AcceptName: "accept-name", TargetName: "bar", Token: testToken}}
	a := &transferv1alpha1.StorageTransferAccept{ObjectMeta: metav1.ObjectMeta{Name: "accept-name", Namespace: "test", UID: "a1"},
		Spec: transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: "prod", RequestName: "request-name", RequestToken: testToken}}
	_ = c.requests.GetIndexer().Add(r)
	_ = c.accepts.GetIndexer().Add(a)
	messages := map[string]bool{}
	for range 50 {
		s := plan.Next(gathered(t, c, r))
		if s.Reason != plan.ReasonSourceInUse {
			t.Fatalf("Next() = %+v, want a %s wait", s, plan.ReasonSourceInUse)
		}
		messages[s.Message] = true
	}
	if len(messages) > 1 {
		var some []string
		for m := range messages {
			some = append(some, m)
			if len(some) == 2 {
				break
			}
		}
		t.Errorf("50 looks at one unchanged world gave %d different messages (each one a status write and an event), e.g.\n%s", len(messages), strings.Join(some, "\n"))
	}
}

// REVIEW FINDING 7. StartReturn, like StartRollback, only writes the
// record; but syncRequest hands it to take, which knows no such step: the
// sync that starts every give-back fails ("StartReturn: no such step"),
// tells a Warning StepFailed event on the request, and is retried
// rate-limited. (Seen in every explorer history that gives an object
// back.)
func TestReviewStartingAReturnIsNotAFailedStep(t *testing.T) {
	spec := boundClaim()[0].(*v1.PersistentVolumeClaim).Spec
	r := &transferv1alpha1.StorageTransferRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "request-name", Namespace: "prod", UID: "r1", Finalizers: []string{plan.Finalizer}},
		Spec: transferv1alpha1.StorageTransferRequestSpec{Source: transferv1alpha1.TransferSource{Kind: transferv1alpha1.KindPersistentVolumeClaim, Name: "data"},
			AcceptName: "accept-name", TargetName: "bar", Token: testToken},
		Status: transferv1alpha1.StorageTransferRequestStatus{Phase: transferv1alpha1.PhaseTransferring, TargetNamespace: "test", AcceptUID: "a1",
			Record: &transferv1alpha1.TransferRecord{Step: string(plan.ActionDeleteSource), PointOfNoReturn: true, SourceUID: "c1", VolumeName: "pv-1",
				OriginalReclaimPolicy: v1.PersistentVolumeReclaimDelete, ClaimSpec: spec.DeepCopy()}}}
	a := &transferv1alpha1.StorageTransferAccept{ObjectMeta: metav1.ObjectMeta{Name: "accept-name", Namespace: "test", UID: "a1"},
		Spec: transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: "prod", RequestName: "request-name", RequestToken: testToken}}
	now := metav1.Now()
	src := boundClaim()[0].(*v1.PersistentVolumeClaim)
	src.DeletionTimestamp, src.Finalizers = &now, []string{plan.Finalizer}
	src.Annotations = map[string]string{plan.LockAnnotation: "r1"}
	pv := boundClaim()[1].(*v1.PersistentVolume)
	pv.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimRetain
	theirs := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "bar", Namespace: "test", UID: "theirs"}}
	events := record.NewFakeRecorder(10)
	c := unstarted(t, events, src, pv, theirs, r, a)
	_ = c.requests.GetIndexer().Add(r)
	_ = c.accepts.GetIndexer().Add(a)
	_ = c.claims.GetIndexer().Add(src)
	_ = c.claims.GetIndexer().Add(theirs)
	_ = c.volumes.GetIndexer().Add(pv)
	if s := plan.Next(gathered(t, c, r)); s.Action != plan.ActionStartReturn {
		t.Fatalf("Setup: Next() = %+v, want StartReturn", s)
	}
	if _, err := c.syncRequest(t.Context(), "prod/request-name"); err != nil {
		t.Errorf("The sync that starts a give-back failed: %v", err)
	}
	close(events.Events)
	for e := range events.Events {
		if strings.Contains(e, "StepFailed") {
			t.Errorf("Event %q", e)
		}
	}
}
