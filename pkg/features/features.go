// Package features defines the sidecar's feature gates.
//
// The gates are registered on a component-base feature gate so that
// --feature-gates behaves exactly like in every other Kubernetes component.
package features

import (
	"k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/component-base/featuregate"
)

const (
	// CrossNamespaceSourceProvisioning lets a PVC restore a VolumeSnapshot
	// from another namespace when a ReferenceGrant allows it (KEP-3294).
	CrossNamespaceSourceProvisioning featuregate.Feature = "CrossNamespaceSourceProvisioning"

	// CrossNamespaceVolumeDataSource is the name the upstream csi-provisioner
	// and Kubernetes use for the same feature. It is accepted as an alias so
	// that manifests written for the upstream sidecar keep working.
	CrossNamespaceVolumeDataSource featuregate.Feature = "CrossNamespaceVolumeDataSource"
)

// specs are the gates this sidecar knows, with their maturity and defaults.
var specs = map[featuregate.Feature]featuregate.FeatureSpec{
	CrossNamespaceSourceProvisioning: {Default: false, PreRelease: featuregate.Alpha},
	CrossNamespaceVolumeDataSource:   {Default: false, PreRelease: featuregate.Alpha},
}

// NewGate returns a fresh gate with every feature of this sidecar registered.
// Each binary and each test builds its own, so nothing is shared globally.
func NewGate() featuregate.MutableVersionedFeatureGate {
	gate := featuregate.NewFeatureGate()
	runtime.Must(gate.Add(specs))
	return gate
}

// CrossNamespaceEnabled reports whether cross-namespace provisioning is on,
// under either of its names.
func CrossNamespaceEnabled(gate featuregate.FeatureGate) bool {
	return gate.Enabled(CrossNamespaceSourceProvisioning) || gate.Enabled(CrossNamespaceVolumeDataSource)
}
