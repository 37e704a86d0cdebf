// Command csi-provisioner is a CSI external-provisioner sidecar that also
// provisions volumes from VolumeSnapshots in other namespaces when a
// ReferenceGrant allows it (KEP-3294). It takes the upstream
// csi-provisioner's flags (sidecar.ParseFlags).
package main

import (
	"github.com/xns-csi/csi-provisioner/internal/shared/command"
	"github.com/xns-csi/csi-provisioner/internal/sidecar"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "unknown"

func main() {
	command.Main("csi-provisioner", version, sidecar.ParseFlags, sidecar.Run)
}
