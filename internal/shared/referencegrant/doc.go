// Package referencegrant decides whether a Gateway API ReferenceGrant allows
// a cross-namespace reference, such as a PersistentVolumeClaim in one
// namespace using a VolumeSnapshot in another (KEP-3294, "Security").
//
// The decision itself (Allows, Decide) is pure and works on Grant, a
// version-independent form of gateway.networking.k8s.io/v1 and v1beta1
// ReferenceGrants. Checker feeds it from an informer cache only, never from
// live API calls, using whichever ReferenceGrant version the cluster serves;
// an index keyed by the target's namespace, group and kind keeps each check
// proportional to the grants that could match, not to all grants.
package referencegrant
