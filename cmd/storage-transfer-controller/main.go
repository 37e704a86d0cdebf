// Command storage-transfer-controller carries out namespace transfers of
// VolumeSnapshots and PersistentVolumeClaims: a StorageTransferRequest in
// the source namespace, a matching StorageTransferAccept in the target
// namespace (seed 002; docs/transfer.md).
package main

import (
	"github.com/xns-csi/csi-provisioner/internal/shared/command"
	"github.com/xns-csi/csi-provisioner/internal/transfer"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "unknown"

func main() {
	command.Main(transfer.Component, version, transfer.ParseFlags, transfer.Run)
}
