//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/test/localdriver"
	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// testVolumeAttributesClass: as with upstream v6.4.0, a claim that names a
// VolumeAttributesClass of the driver binds to a PV that names the class,
// and the driver got the class's parameters as CreateVolume's
// mutable_parameters. A claim naming another driver's class, or a class
// that does not exist, is not provisioned and gets a ProvisioningFailed
// event that says why.
func testVolumeAttributesClass(t *testing.T) {
	gold := map[string]string{localdriver.ParameterIOPS: "3000"}
	const otherDriver = "other.csi.example.com"
	ours := attributesClass(t, "gold", localenv.LocalDriver, gold)
	theirs := attributesClass(t, "theirs", otherDriver, gold)
	missing := fmt.Sprintf("missing-%04d", rand.IntN(10000))
	class := storageClass(t, "vac", localenv.LocalDriver)
	ns := namespace(t, "vac")

	createPVC(t, ns, "gold", class, inAttributesClass(ours))
	createPVC(t, ns, "theirs", class, inAttributesClass(theirs))
	createPVC(t, ns, "missing", class, inAttributesClass(missing))

	pv := waitBound(t, ns, "gold")
	if got := ptr.Deref(pv.Spec.VolumeAttributesClassName, ""); got != ours {
		t.Errorf("PV %s names VolumeAttributesClass %q, want %q", pv.Name, got, ours)
	}
	recorded, err := localdriver.RecordedMutableParameters(volumeDir(world.Local, pv))
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(recorded, gold) {
		t.Errorf("the driver recorded mutable parameters %v, want %v", recorded, gold)
	}

	waitEvent(t, ns, "theirs", "ProvisioningFailed", fmt.Sprintf("VAC %s referenced in PVC is for driver %s which does not match driver name %s",
		theirs, otherDriver, localenv.LocalDriver))
	staysPending(t, ns, "theirs")
	waitEvent(t, ns, "missing", "ProvisioningFailed", fmt.Sprintf("volumeattributesclasses.storage.k8s.io %q not found", missing))
	staysPending(t, ns, "missing")
}

// attributesClass creates a VolumeAttributesClass of driver, named
// uniquely from prefix, and deletes it after the test.
func attributesClass(t *testing.T, prefix, driver string, params map[string]string) string {
	t.Helper()
	vac := &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"},
		DriverName: driver, Parameters: params}
	vac, err := world.Kube.StorageV1().VolumeAttributesClasses().Create(context.Background(), vac, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = world.Kube.StorageV1().VolumeAttributesClasses().Delete(context.Background(), vac.Name, metav1.DeleteOptions{})
	})
	return vac.Name
}

func inAttributesClass(name string) pvcOption {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeAttributesClassName = &name }
}
