// Package features defines the sidecar's feature gates.
//
// The gates are registered on a component-base feature gate so that
// --feature-gates behaves exactly like in every other Kubernetes component.
// Every gate of the upstream csi-provisioner v6.4.0 is known here under its
// upstream name, maturity and default (its internal/shared/features), so that
// --feature-gates lists written for it are accepted unchanged.
package features

import (
	"k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
)

const (
	// CrossNamespaceSourceProvisioning lets a PVC restore a VolumeSnapshot
	// (KEP-3294) or clone a PVC (as upstream) named in another namespace by
	// spec.dataSourceRef.namespace, when a ReferenceGrant there allows it.
	CrossNamespaceSourceProvisioning featuregate.Feature = "CrossNamespaceSourceProvisioning"

	// CrossNamespaceVolumeDataSource is the name the upstream csi-provisioner
	// and Kubernetes use for the same feature. It is accepted as an alias so
	// that manifests written for the upstream sidecar keep working.
	CrossNamespaceVolumeDataSource featuregate.Feature = "CrossNamespaceVolumeDataSource"

	// Topology passes topology requirements to CreateVolume and sets node
	// affinity on PVs, for drivers with VOLUME_ACCESSIBILITY_CONSTRAINTS.
	// GA and on by default, as upstream; upstream does not lock it, so
	// Topology=false is accepted (with component-base's "setting GA feature
	// gate" warning) and treats the driver as one without the capability.
	// Charts commonly pass Topology=true, which changes nothing.
	Topology featuregate.Feature = "Topology"

	// VolumeAttributesClass passes a claim's VolumeAttributesClass
	// parameters to CreateVolume as mutable parameters (KEP-3751, GA). As
	// upstream, when it is not set on the command line the feature is on
	// only while the cluster serves storage.k8s.io/v1 VolumeAttributesClasses
	// (see provisioner.Options.VolumeAttributesClass).
	VolumeAttributesClass featuregate.Feature = "VolumeAttributesClass"

	// ReleaseLeaderElectionOnExit releases the leader-election Lease on
	// SIGTERM or SIGINT once the controllers have stopped, so a standby
	// replica takes over at once instead of after the lease duration.
	ReleaseLeaderElectionOnExit featuregate.Feature = "ReleaseLeaderElectionOnExit"
)

// specs are the gates this sidecar knows, with their maturity and defaults.
// The upstream ones match external-provisioner v6.4.0's internal/shared/features.
var specs = map[featuregate.Feature]featuregate.FeatureSpec{
	CrossNamespaceSourceProvisioning: {Default: false, PreRelease: featuregate.Alpha},
	CrossNamespaceVolumeDataSource:   {Default: false, PreRelease: featuregate.Alpha},
	Topology:                         {Default: true, PreRelease: featuregate.GA},
	VolumeAttributesClass:            {Default: true, PreRelease: featuregate.GA},
	ReleaseLeaderElectionOnExit:      {Default: false, PreRelease: featuregate.Alpha},
}

// NewGate returns a fresh gate with every feature of this sidecar and the
// component-base logging gates (LoggingBetaOptions, which gates
// --logging-format=json, and friends) registered. Each binary and each test
// builds its own, so nothing is shared globally.
func NewGate() featuregate.MutableVersionedFeatureGate {
	gate := featuregate.NewFeatureGate()
	runtime.Must(gate.Add(specs))
	runtime.Must(gate.Add(apiServerGates))
	runtime.Must(logsapi.AddFeatureGates(gate))
	return gate
}

// CrossNamespaceEnabled reports whether cross-namespace provisioning is on,
// under either of its names.
func CrossNamespaceEnabled(gate featuregate.FeatureGate) bool {
	return gate.Enabled(CrossNamespaceSourceProvisioning) || gate.Enabled(CrossNamespaceVolumeDataSource)
}
