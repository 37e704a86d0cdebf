// Package v1alpha1 is the v1alpha1 version of this project's transfer API:
// StorageTransferRequest and StorageTransferAccept, with which the owners
// of two namespaces hand a VolumeSnapshot or a PersistentVolumeClaim from
// one namespace to the other without copying data (seed 002, "Allow
// VolumeSnapshot resources to be transferred between namespaces", which
// extends the PVC namespace transfer API of kubernetes/enhancements#2110).
//
// The seed puts these kinds in storage.k8s.io, a group built into
// kube-apiserver, which a CustomResourceDefinition cannot use; they live in
// transfer.xns-csi.io, a group of this project's own (docs/transfer.md).
//
// The deepcopy functions (zz_generated.deepcopy.go), the clientset, listers
// and informers under pkg/generated and the CRDs under deploy/crds are
// generated from these types by `make generate`; `make verify` fails when
// they are stale.
//
// +k8s:deepcopy-gen=package
// +groupName=transfer.xns-csi.io
package v1alpha1
