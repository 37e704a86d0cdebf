// Package property holds randomized property tests of decisions that span
// several packages: the KEP-3294 authorization rule, decided through
// claimsource.Policy (datasource.Resolve, the feature gate and the
// referencegrant rule), is compared with a reference model written from the
// KEP and the README over many generated worlds.
package property
