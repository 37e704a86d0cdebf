package v1beta1_test

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	popv1beta1 "github.com/xns-csi/csi-provisioner/pkg/apis/populator/v1beta1"
)

func TestSchemeKnowsTheKinds(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := popv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{popv1beta1.Kind, popv1beta1.Kind + "List"} {
		if gvk := popv1beta1.SchemeGroupVersion.WithKind(kind); !scheme.Recognizes(gvk) {
			t.Errorf("The scheme does not recognize %s", gvk)
		}
	}
}

// TestWireFormatIsUpstreams decodes a VolumePopulator as upstream's
// documentation and deploy/populator write it: sourceKind {group, kind} at
// the top level, no spec.
func TestWireFormatIsUpstreams(t *testing.T) {
	doc := `{"apiVersion":"populator.storage.k8s.io/v1beta1","kind":"VolumePopulator",` +
		`"metadata":{"name":"hello-populator"},"sourceKind":{"group":"hello.example.com","kind":"Hello"}}`
	var p popv1beta1.VolumePopulator
	if err := json.Unmarshal([]byte(doc), &p); err != nil {
		t.Fatal(err)
	}
	if want := (metav1.GroupKind{Group: "hello.example.com", Kind: "Hello"}); p.SourceKind != want {
		t.Errorf("SourceKind = %v, want %v", p.SourceKind, want)
	}
	out, err := json.Marshal(&p)
	if err != nil {
		t.Fatal(err)
	}
	var back popv1beta1.VolumePopulator
	if err := json.Unmarshal(out, &back); err != nil || back.SourceKind != p.SourceKind || back.Name != p.Name {
		t.Errorf("Round trip gave %+v (%v), want %+v", back, err, p)
	}
}
