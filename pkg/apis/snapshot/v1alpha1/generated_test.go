package v1alpha1_test

import (
	"context"
	"testing"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/generated/clientset/versioned/fake"
	"github.com/xns-csi/csi-provisioner/pkg/generated/informers"
)

// The tests of this file use the generated code (pkg/generated and
// zz_generated.deepcopy.go) the way the sidecar will, to show that what
// `make generate` writes fits the types.

func TestSchemeKnowsTheKinds(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := snapv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"VolumeSnapshotLink", "VolumeSnapshotLinkList"} {
		gvk := snapv1alpha1.SchemeGroupVersion.WithKind(kind)
		if !scheme.Recognizes(gvk) {
			t.Errorf("The scheme does not recognize %s", gvk)
		}
	}
	if got, want := snapv1alpha1.SchemeGroupVersion.WithKind(snapv1alpha1.Kind).GroupKind().String(), "VolumeSnapshotLink.snapshot.storage.k8s.io"; got != want {
		t.Errorf("Kind in GroupName = %s, want %s", got, want)
	}
}

func TestDeepCopyIsDeep(t *testing.T) {
	link := storyLink()
	link.Status.Conditions = []metav1.Condition{{Type: snapv1alpha1.ConditionAllowed, Status: metav1.ConditionTrue, Reason: "Granted"}}
	cp := link.DeepCopy()
	if !apiequality.Semantic.DeepEqual(link, cp) {
		t.Fatalf("DeepCopy() = %+v, want %+v", cp, link)
	}
	cp.Status.Conditions[0].Status = metav1.ConditionFalse
	cp.Labels["changed"] = "yes"
	if link.Status.Conditions[0].Status != metav1.ConditionTrue || link.Labels["changed"] != "" {
		t.Errorf("Changing the copy changed the original: %+v", link)
	}
}

func TestClientsetInformerAndListerServeLinks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	client := fake.NewSimpleClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	// Shutdown waits for the informers, which stop when ctx is done.
	defer factory.Shutdown()
	defer cancel()
	links := factory.Snapshot().V1alpha1().VolumeSnapshotLinks()
	added := make(chan struct{}, 1)
	if _, err := links.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { added <- struct{}{} },
	}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), links.Informer().HasSynced) {
		t.Fatal("The informer did not sync")
	}

	created, err := client.SnapshotV1alpha1().VolumeSnapshotLinks("test").Create(ctx, storyLink(), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	select {
	case <-added:
	case <-ctx.Done():
		t.Fatal("The informer never saw the link")
	}
	got, err := links.Lister().VolumeSnapshotLinks("test").Get("foo-link")
	if err != nil {
		t.Fatalf("Lister: %v", err)
	}
	if !apiequality.Semantic.DeepEqual(got.Spec, created.Spec) {
		t.Errorf("Lister got spec %+v, want %+v", got.Spec, created.Spec)
	}
	if _, err := links.Lister().VolumeSnapshotLinks("prod").Get("foo-link"); err == nil {
		t.Error("The lister found foo-link in prod, want NotFound")
	}
}
