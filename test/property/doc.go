// Package property holds randomized property tests of decisions that span
// several packages: the KEP-3294 authorization rule, decided through
// claimsource.Policy (datasource.Resolve, the feature gate and the
// referencegrant rule), is compared with a reference model written from the
// KEP and the docs over many generated worlds; and the annotations and
// labels tenants set on their claims, snapshots, links and grants are
// checked to widen no cross-namespace decision of any component (issue 21,
// metadata_test.go).
package property
