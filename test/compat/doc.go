// Package compat holds the drop-in compatibility tests of the sidecar
// against the upstream kubernetes-csi external-provisioner v6.4.0: every
// upstream flag is defined with the same type and default
// (testdata/upstream-v6.4.0.flags), every upstream feature gate is accepted
// with the same maturity and default (testdata/upstream-v6.4.0.gates), and
// the argument lists of upstream's own manifests and of popular driver
// charts (testdata/*.args, each naming its source; those written for v6.3
// stay) are accepted, both by sidecar.ParseFlags and by the built binary,
// which must get past flag parsing with them.
package compat
