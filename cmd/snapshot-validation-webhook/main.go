// Command snapshot-validation-webhook is the validating admission webhook
// of seed 004 (KEP-1900) for VolumeSnapshots, VolumeSnapshotContents and
// their classes: strict on create, immutable fields on update, ratcheting
// for objects persisted before it, and at most one default class per
// driver, the rule CRD CEL rules cannot state. It takes the flags of
// external-snapshotter's last snapshot-validation-webhook
// (snapshotwebhook.ParseFlags).
package main

import (
	"github.com/xns-csi/csi-provisioner/internal/shared/command"
	"github.com/xns-csi/csi-provisioner/internal/snapshotwebhook"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "unknown"

func main() {
	command.Main(snapshotwebhook.Component, version, snapshotwebhook.ParseFlags, snapshotwebhook.Run)
}
