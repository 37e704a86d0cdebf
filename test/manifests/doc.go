// Package manifests holds the tests of the YAML under deploy/: every
// document decodes strictly into its typed Go API struct, ReferenceGrants
// and data-source references use groups the real CRDs and API server
// accept, the ClusterRoles grant what the sidecar and the validator use and
// nothing more, and the CRDs generated from pkg/apis carry what the types promise (the
// approval annotation, the status subresource, the immutable spec, the
// printer columns, Kubernetes' name rules). Every kustomization is rendered
// with `kubectl kustomize` (what `kubectl apply -k` installs) and must give
// exactly the objects its component holds; the sidecar's Deployment, as each
// kustomization renders it, has a pinned, fully qualified image, probes,
// a memory request and the downward-API environment upstream's flags need;
// the overlays/ha overlay runs replicas on different nodes under leader
// election and a PodDisruptionBudget. It has no code outside its tests.
package manifests
