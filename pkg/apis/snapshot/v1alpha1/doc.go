// Package v1alpha1 is the v1alpha1 version of this project's API in the
// snapshot.storage.k8s.io group: the VolumeSnapshotLink of KEP-3294's
// "Alternatives" section (seed 000, "Introducing a new VolumeSnapshotLink
// API"), a namespaced object that names a VolumeSnapshot, possibly in
// another namespace, so a PersistentVolumeClaim can use it as a volume
// populator source.
//
// The deepcopy functions (zz_generated.deepcopy.go), the clientset, listers
// and informers under pkg/generated and the CRD under deploy/crds are
// generated from these types by `make generate`; `make verify` fails when
// they are stale.
//
// +k8s:deepcopy-gen=package
// +groupName=snapshot.storage.k8s.io
package v1alpha1
