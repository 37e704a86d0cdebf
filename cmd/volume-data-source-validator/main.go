// Command volume-data-source-validator is the KEP-1495 validator of
// PersistentVolumeClaim data sources that also understands namespaces and
// ReferenceGrants (KEP-3294): it warns, once per claim and state, when a
// claim names a kind no VolumePopulator registers, or a source in another
// namespace that no ReferenceGrant allows. It takes the upstream
// kubernetes-csi/volume-data-source-validator's flags (validator.ParseFlags).
package main

import (
	"github.com/xns-csi/csi-provisioner/internal/shared/command"
	"github.com/xns-csi/csi-provisioner/internal/validator"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "unknown"

func main() {
	command.Main(validator.Component, version, validator.ParseFlags, validator.Run)
}
