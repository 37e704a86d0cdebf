package transfer

import (
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapfake "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/fake"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

func recordedRequest() *transferv1alpha1.StorageTransferRequest {
	return &transferv1alpha1.StorageTransferRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "move", Namespace: "prod", UID: "r1"},
		Spec:       transferv1alpha1.StorageTransferRequestSpec{TargetName: "bar"},
		Status: transferv1alpha1.StorageTransferRequestStatus{TargetNamespace: "test", Record: &transferv1alpha1.TransferRecord{
			TargetContentName: "snapcontent-transfer-r1", SnapshotHandle: "snap-1", Driver: "local.csi", VolumeSnapshotClassName: "csi-snapclass",
			VolumeName: "pv-1", ClaimSpec: &v1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("csi"), VolumeName: "pv-1",
				DataSourceRef: &v1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "origin"}}}},
	}
}

// TestTargetContent: the target content is built from the record alone
// (the source content may be gone), carries the source's volume mode and
// its permission to change it (issue 23 defect 15), and names as its
// deletion secret only the one the accept named, of the target namespace:
// never a secret of the source namespace (defect 6). The content that gives
// the snapshot back names the source's own.
func TestTargetContent(t *testing.T) {
	tests := map[string]struct {
		record                     func(*transferv1alpha1.TransferRecord)
		wantSecret, wantNamespace  string
		wantBackSecret, wantBackNS string
	}{
		"no deletion secret": {record: func(*transferv1alpha1.TransferRecord) {}},
		"the accept's for the target, the source's to give it back": {record: func(rec *transferv1alpha1.TransferRecord) {
			rec.TargetDeletionSecret, rec.SourceDeletionSecret = "test/test-secret", "prod/prod-secret"
		}, wantSecret: "test-secret", wantNamespace: "test", wantBackSecret: "prod-secret", wantBackNS: "prod"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := recordedRequest()
			r.Spec.Source.Name = "foo"
			r.Status.Record.SourceVolumeMode = ptr.To(v1.PersistentVolumeBlock)
			r.Status.Record.AllowVolumeModeChange = "true"
			tc.record(r.Status.Record)
			c := targetContent(r)
			if c.Name != "snapcontent-transfer-r1" || *c.Spec.Source.SnapshotHandle != "snap-1" || c.Spec.Driver != "local.csi" ||
				*c.Spec.VolumeSnapshotClassName != "csi-snapclass" || c.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentRetain {
				t.Errorf("content = %+v, want the recorded snapshot, driver and class under Retain", c)
			}
			if ref := c.Spec.VolumeSnapshotRef; ref.Namespace != "test" || ref.Name != "bar" || ref.UID != "" {
				t.Errorf("volumeSnapshotRef = %+v, want test/bar without UID", ref)
			}
			if c.Annotations[plan.RequestAnnotation] != "r1" {
				t.Errorf("annotations = %v, want the request's UID", c.Annotations)
			}
			if ptr.Deref(c.Spec.SourceVolumeMode, "") != v1.PersistentVolumeBlock || c.Annotations[plan.AllowVolumeModeChangeAnnotation] != "true" {
				t.Errorf("content = %+v, want sourceVolumeMode Block and the volume mode change allowed, as recorded", c)
			}
			if c.Annotations[plan.DeletionSecretNameAnnotation] != tc.wantSecret || c.Annotations[plan.DeletionSecretNamespaceAnnotation] != tc.wantNamespace {
				t.Errorf("deletion secret = %s/%s, want %s/%s", c.Annotations[plan.DeletionSecretNamespaceAnnotation], c.Annotations[plan.DeletionSecretNameAnnotation], tc.wantNamespace, tc.wantSecret)
			}
			back := returnContent(r)
			if ref := back.Spec.VolumeSnapshotRef; back.Name != "snapcontent-return-r1" || ref.Namespace != "prod" || ref.Name != "foo" {
				t.Errorf("return content %s names %+v, want snapcontent-return-r1 for prod/foo", back.Name, ref)
			}
			if back.Annotations[plan.DeletionSecretNameAnnotation] != tc.wantBackSecret || back.Annotations[plan.DeletionSecretNamespaceAnnotation] != tc.wantBackNS {
				t.Errorf("return content's deletion secret = %s/%s, want %s/%s", back.Annotations[plan.DeletionSecretNamespaceAnnotation], back.Annotations[plan.DeletionSecretNameAnnotation], tc.wantBackNS, tc.wantBackSecret)
			}
		})
	}
}

func TestTargetClaimIsTheRecordedSpecBoundToTheVolume(t *testing.T) {
	r := recordedRequest()
	c := targetClaim(r)
	if c.Namespace != "test" || c.Name != "bar" || c.Spec.VolumeName != "pv-1" || *c.Spec.StorageClassName != "csi" {
		t.Errorf("claim = %+v, want test/bar of class csi bound to pv-1", c)
	}
	if c.Spec.DataSource != nil || c.Spec.DataSourceRef != nil {
		t.Errorf("data source = %v %v, want none: it named an object of the source namespace", c.Spec.DataSource, c.Spec.DataSourceRef)
	}
	if r.Status.Record.ClaimSpec.DataSourceRef == nil {
		t.Error("building the claim changed the record")
	}
}

// TestDeletionsAreConditionalOnWhatWasObserved: a content is deleted
// because it was seen Retain and a source claim because its spec is the
// one recorded; a cache behind a change made since must not delete them
// (the API server refuses a stale resourceVersion with a conflict).
func TestDeletionsAreConditionalOnWhatWasObserved(t *testing.T) {
	content := &snapv1.VolumeSnapshotContent{ObjectMeta: metav1.ObjectMeta{Name: "snapcontent-s1", UID: "sc1", ResourceVersion: "7"}}
	target := &snapv1.VolumeSnapshotContent{ObjectMeta: metav1.ObjectMeta{Name: "snapcontent-transfer-r1", UID: "tc1", ResourceVersion: "8"}}
	claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "prod", UID: "c1", ResourceVersion: "9"}}
	tests := map[string]struct {
		kind     string
		action   plan.Action
		observed plan.Observed
		want     *metav1.ObjectMeta
	}{
		"the source content": {transferv1alpha1.KindVolumeSnapshot, plan.ActionDeleteSourceContent, plan.Observed{SourceContent: content}, &content.ObjectMeta},
		"the target content": {transferv1alpha1.KindVolumeSnapshot, plan.ActionDeleteTargetContent, plan.Observed{TargetContent: target}, &target.ObjectMeta},
		"the source claim":   {transferv1alpha1.KindPersistentVolumeClaim, plan.ActionDeleteSource, plan.Observed{SourceClaim: claim}, &claim.ObjectMeta},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			kube, snaps := kubefake.NewClientset(), snapfake.NewSimpleClientset()
			c := &Controller{cfg: Config{Kube: kube, Snapshot: snaps}}
			r := recordedRequest()
			r.Spec.Source = transferv1alpha1.TransferSource{Kind: tc.kind, Name: "data"}
			r.Status.Record.SourceUID = "c1"
			_, ctx := ktesting.NewTestContext(t)
			if err := c.take(ctx, r, &tc.observed, tc.action); err != nil {
				t.Fatal(err)
			}
			var deletes []clienttesting.DeleteActionImpl
			for _, a := range append(kube.Actions(), snaps.Actions()...) {
				if d, ok := a.(clienttesting.DeleteActionImpl); ok {
					deletes = append(deletes, d)
				}
			}
			if len(deletes) != 1 {
				t.Fatalf("Deletions = %v, want one", deletes)
			}
			p := deletes[0].DeleteOptions.Preconditions
			if p == nil || p.UID == nil || *p.UID != tc.want.UID || p.ResourceVersion == nil || *p.ResourceVersion != tc.want.ResourceVersion {
				t.Errorf("Preconditions = %+v, want UID %s and resourceVersion %s", p, tc.want.UID, tc.want.ResourceVersion)
			}
		})
	}
}
