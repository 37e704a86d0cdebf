// Package compat holds the drop-in compatibility tests of the sidecar
// against the upstream kubernetes-csi external-provisioner v6.3: every
// upstream flag is defined with the same type and default
// (testdata/upstream-v6.3.0.flags), and the argument lists of upstream's own
// manifests and of popular driver charts (testdata/*.args, each naming its
// source) are accepted, both by sidecar.ParseFlags and by the built binary,
// which must get past flag parsing with them.
package compat
