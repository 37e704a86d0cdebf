// Package manifests holds the tests of the YAML under deploy/: every
// document decodes strictly into its typed Go API struct, ReferenceGrants
// and data-source references use groups the real CRDs and API server
// accept, and the ClusterRole grants what the sidecar uses and nothing
// more. It has no code outside its tests.
package manifests
