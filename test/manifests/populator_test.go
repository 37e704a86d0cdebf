package manifests

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	popv1beta1 "github.com/xns-csi/csi-provisioner/pkg/apis/populator/v1beta1"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// TestVolumePopulatorNamesTheLinkKind checks deploy/populator's
// VolumePopulator, decoded strictly into the type of pkg/apis/populator: it
// registers the kind of pkg/apis/snapshot (KEP-3294, "Populator
// implementation").
func TestVolumePopulatorNamesTheLinkKind(t *testing.T) {
	var found bool
	for _, m := range loadManifests(t) {
		p, ok := m.obj.(*popv1beta1.VolumePopulator)
		if !ok {
			continue
		}
		found = true
		if want := (metav1.GroupKind{Group: snapv1alpha1.GroupName, Kind: snapv1alpha1.Kind}); p.SourceKind != want {
			t.Errorf("%s has sourceKind %v, want %v", m.source, p.SourceKind, want)
		}
	}
	if !found {
		t.Error("deploy/ has no VolumePopulator")
	}
}
