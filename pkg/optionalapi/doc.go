// Package optionalapi runs a shared informer for an API that the cluster may
// not serve yet (its CRD is not installed) or that the sidecar may not be
// allowed to read yet (RBAC is missing).
//
// The CSI provisioner must start and provision ordinary volumes even when the
// Gateway API ReferenceGrant CRD or the snapshot CRDs are absent, so an
// optional API never blocks start-up: Run polls discovery until one of the
// candidate versions is served, then starts that version's informer and lets
// its reflector retry until the list is allowed. Nothing needs a restart when
// the CRD or the RBAC rule arrives later. Until then, Informer explains in
// plain words why the API cannot be used, so callers can tell the user what
// is missing (see KEP-3294, "Security", and "CSI external provisioner").
package optionalapi
