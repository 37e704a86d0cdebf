package v1alpha1_test

import (
	"context"
	"testing"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned/fake"
	"github.com/xns-csi/csi-provisioner/pkg/generated/informers"
)

// The tests of this file use the generated code (pkg/generated and
// zz_generated.deepcopy.go) the way the transfer controller does.

func TestSchemeKnowsTheKinds(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := transferv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"StorageTransferRequest", "StorageTransferRequestList", "StorageTransferAccept", "StorageTransferAcceptList"} {
		gvk := transferv1alpha1.SchemeGroupVersion.WithKind(kind)
		if !scheme.Recognizes(gvk) {
			t.Errorf("The scheme does not recognize %s", gvk)
		}
	}
}

func TestDeepCopyCopiesTheRecord(t *testing.T) {
	req := storyRequest()
	req.Status.Record = &transferv1alpha1.TransferRecord{Step: "Lock", SourceUID: "u1", SourceContentName: "c"}
	cp := req.DeepCopy()
	if !apiequality.Semantic.DeepEqual(req, cp) {
		t.Fatalf("DeepCopy() = %+v, want %+v", cp, req)
	}
	cp.Status.Record.Step = "Retain"
	cp.Spec.Secrets[0].Name = "changed"
	if req.Status.Record.Step != "Lock" || req.Spec.Secrets[0].Name != "secret-name" {
		t.Errorf("Changing the copy changed the original: %+v", req)
	}
}

func TestClientsetInformerAndListerServeRequestsAndAccepts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	client := fake.NewSimpleClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	defer factory.Shutdown()
	defer cancel()
	requests := factory.Transfer().V1alpha1().StorageTransferRequests()
	accepts := factory.Transfer().V1alpha1().StorageTransferAccepts()
	requests.Informer()
	accepts.Informer()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())

	if _, err := client.TransferV1alpha1().StorageTransferRequests("prod").Create(ctx, storyRequest(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	accept := &transferv1alpha1.StorageTransferAccept{
		ObjectMeta: metav1.ObjectMeta{Name: "accept-name", Namespace: "test"},
		Spec:       transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: "prod", RequestName: "request-name", RequestToken: "t"},
	}
	if _, err := client.TransferV1alpha1().StorageTransferAccepts("test").Create(ctx, accept, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !cache.WaitForCacheSync(ctx.Done(), func() bool {
		_, errR := requests.Lister().StorageTransferRequests("prod").Get("request-name")
		_, errA := accepts.Lister().StorageTransferAccepts("test").Get("accept-name")
		return errR == nil && errA == nil
	}) {
		t.Fatal("The listers never saw the request and the accept")
	}
}

// storyRequest is the seed's example request.
func storyRequest() *transferv1alpha1.StorageTransferRequest {
	return &transferv1alpha1.StorageTransferRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "request-name", Namespace: "prod"},
		Spec: transferv1alpha1.StorageTransferRequestSpec{
			Source:     transferv1alpha1.TransferSource{Kind: transferv1alpha1.KindVolumeSnapshot, Name: "foo"},
			Secrets:    []transferv1alpha1.TransferSecret{{Name: "secret-name", Namespace: "secret-namespace", Type: "csi.storage.k8s.io/snapshotter-secret-name"}},
			AcceptName: "accept-name",
			TargetName: "bar",
		},
	}
}
