// Package validator is the volume-data-source-validator of KEP-1495 (seed
// 001) that also understands namespaces and grants (KEP-3294, seed 000).
// It watches PersistentVolumeClaims and VolumePopulator registrations and
// tells a claim's owner, with one Warning event per claim and state, when
// nothing will fill the claim from the data source it names:
//
//   - a kind no VolumePopulator registers (UnrecognizedDataSourceKind, as
//     the upstream kubernetes-csi/volume-data-source-validator says);
//   - a source in another namespace, directly or through a
//     VolumeSnapshotLink, that no ReferenceGrant allows, a
//     dataSourceRef the API server dropped, and the other refusals of the
//     csi-provisioner sidecar's claim-level decision, with the sidecar's
//     reasons and words.
//
// The verdict is the sidecar's own: claimsource.Policy.Admit over the same
// caches (referencegrant, linkcache, optionalapi), never a copy of its
// rules. Decide adds only what is the validator's: bound claims and
// registered populator kinds are quiet, and a cache still syncing is waited
// for rather than reported. Gathering (the controller) and deciding
// (Decide) are separate; Decide is pure.
//
// Run wires it as cmd/volume-data-source-validator runs it: flags as
// upstream's, leader election, metrics and health checks.
package validator
