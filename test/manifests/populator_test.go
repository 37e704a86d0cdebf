package manifests

import (
	"maps"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// TestVolumePopulatorNamesTheLinkKind checks deploy/populator's
// VolumePopulator, which decodes without a typed struct: it registers the
// kind of pkg/apis (KEP-3294, "Populator implementation") and has no field
// beyond those of the VolumePopulator CRD (populator.storage.k8s.io/v1beta1:
// sourceKind {group, kind}).
func TestVolumePopulatorNamesTheLinkKind(t *testing.T) {
	var found bool
	for _, m := range loadManifests(t) {
		if m.gvk != populatorKind {
			continue
		}
		found = true
		obj := m.obj.(*unstructured.Unstructured).Object
		if got := sorted(slices.Collect(maps.Keys(obj))); !slices.Equal(got, []string{"apiVersion", "kind", "metadata", "sourceKind"}) {
			t.Errorf("%s has the fields %q, want apiVersion, kind, metadata and sourceKind", m.source, got)
		}
		sourceKind, _, _ := unstructured.NestedStringMap(obj, "sourceKind")
		if want := map[string]string{"group": snapv1alpha1.GroupName, "kind": snapv1alpha1.Kind}; !maps.Equal(sourceKind, want) {
			t.Errorf("%s has sourceKind %v, want %v", m.source, sourceKind, want)
		}
	}
	if !found {
		t.Error("deploy/ has no VolumePopulator")
	}
}
