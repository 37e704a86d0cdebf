// Package optionalapi runs a shared informer for an API that the cluster may
// not serve yet (its CRD is not installed) or that the sidecar may not be
// allowed to read yet (RBAC is missing).
//
// The CSI provisioner must start and provision ordinary volumes even when the
// Gateway API ReferenceGrant CRD or the snapshot CRDs are absent, so an
// optional API never blocks start-up: Run polls discovery until one of the
// candidate versions is served, then starts that version's informer.
// Nothing needs a restart when the CRD or the RBAC rule arrives later. Until
// then, Informer explains in plain words why the API cannot be used, so
// callers can tell the user what is missing (see KEP-3294, "Security", and
// "CSI external provisioner").
//
// RBAC that allows list but not watch is normal: the upstream
// csi-provisioner's grants get and list on VolumeSnapshotContents and GETs
// each one. An informer refused its list or watch is therefore stopped
// rather than retried in a loop (each retry would LIST every object), and
// the permission is checked again with a cheap request at growing intervals
// (refusal.go); meanwhile callers allowed to GET read objects directly.
package optionalapi
