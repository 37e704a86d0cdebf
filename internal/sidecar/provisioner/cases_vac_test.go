package provisioner

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	csiclient "github.com/xns-csi/csi-provisioner/internal/sidecar/csi"
)

// VolumeAttributesClasses, as upstream v6.4.0 handles them at provisioning
// (its TestProvision cases "... with VolumeAttributesClass ...").

// modifying is a driver with MODIFY_VOLUME.
var modifying = capsWith(func(c *csiclient.Capabilities) { c.ModifyVolume = true })

func attributesClass(name, driverName string) *storagev1.VolumeAttributesClass {
	return &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: name}, DriverName: driverName,
		Parameters: map[string]string{"test-param": "from-vac"}}
}

func inAttributesClass(name string) claimOption {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeAttributesClassName = ptr.To(name) }
}

func gate(on bool) func(*Options) { return func(o *Options) { o.VolumeAttributesClass = ptr.To(on) } }

func TestVolumeAttributesClasses(t *testing.T) {
	const provisionedInGold = provisioned + " in VolumeAttributesClass gold"
	class := objects(ours(inAttributesClass("gold")), attributesClass("gold", driver))
	runFramework(t, []frameworkCase{
		{
			name:    "the class's parameters are the mutable parameters, and the PV names the class",
			caps:    modifying,
			objects: class,
			steps:   []step{provision("test/data", created)},
			want:    []string{create + " with mutable parameters map[test-param:from-vac]", provisionedInGold},
		},
		{
			name:    "the class is ignored with the gate set off",
			caps:    modifying,
			options: gate(false),
			objects: class,
			steps:   []step{provision("test/data", created)},
			want:    []string{create, provisioned},
		},
		{
			name:    "a driver without MODIFY_VOLUME cannot provision a claim with a class",
			objects: class,
			steps:   []step{provision("test/data")},
			want:    []string{"provision test/data: NoChange, error: CSI driver does not support VolumeAttributesClass: controller MODIFY_VOLUME capability is not reported"},
		},
		{
			name:    "a class that does not exist is an error",
			caps:    modifying,
			objects: objects(ours(inAttributesClass("does-not-exist")), attributesClass("gold", driver)),
			steps:   []step{provision("test/data")},
			want:    []string{`provision test/data: NoChange, error: volumeattributesclasses.storage.k8s.io "does-not-exist" not found`},
		},
		{
			name:    "a class of another driver is an error",
			caps:    modifying,
			objects: objects(ours(inAttributesClass("gold")), attributesClass("gold", "not-"+driver)),
			steps:   []step{provision("test/data")},
			want:    []string{"provision test/data: NoChange, error: VAC gold referenced in PVC is for driver not-" + driver + " which does not match driver name " + driver},
		},
		{
			// Upstream turns its gate off at start when discovery does not
			// find storage.k8s.io/v1 VolumeAttributesClasses.
			name:                      "with the gate not set, a cluster without the v1 API turns the feature off",
			caps:                      modifying,
			attributesClassesUnserved: true,
			objects:                   class,
			steps:                     []step{provision("test/data", created)},
			want:                      []string{create, provisioned},
		},
		{
			name:                      "with the gate set on, a cluster without the v1 API is an error",
			caps:                      modifying,
			options:                   gate(true),
			attributesClassesUnserved: true,
			objects:                   class,
			steps:                     []step{provision("test/data")},
			want:                      []string{"provision test/data: NoChange, error: VolumeAttributesClass API is not served by the API server"},
		},
		{
			name:    "a claim without a class has neither mutable parameters nor a class in its PV",
			caps:    modifying,
			objects: objects(ours(), attributesClass("gold", driver)),
			steps:   []step{provision("test/data", created)},
			want:    []string{create, provisioned},
		},
	})
}
