// Package v1beta1 is the v1beta1 version of the populator.storage.k8s.io
// API: the VolumePopulator of KEP-1495 (seed 001), a cluster-scoped object
// by which a volume populator registers the kind of data source it fills
// volumes from, so that the volume-data-source-validator does not report
// claims naming that kind.
//
// The API is the one kubernetes-csi/volume-data-source-validator publishes
// (its client module's apis/volumepopulator/v1beta1), with the same group,
// version, scope and schema, so a cluster can switch between that validator
// and this project's with the same CRD and the same VolumePopulators. The
// Go module of that client is not served by the module proxy, so the types
// are declared here; `make generate` writes their deepcopy functions, the
// clientset, listers and informers under pkg/generated and the CRD under
// deploy/crds.
//
// +k8s:deepcopy-gen=package
// +groupName=populator.storage.k8s.io
package v1beta1
