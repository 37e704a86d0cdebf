package provisioner

import (
	"fmt"
	"maps"
	"time"
)

// IdentityKey is the volume attribute in which every PV carries the identity
// of the provisioner that created it, as upstream. Drivers receive it in the
// volume context of every later call (ControllerPublishVolume,
// NodeStageVolume, NodePublishVolume); upstream's own Delete does not read
// it.
const IdentityKey = "storage.kubernetes.io/csiProvisionerIdentity"

// Identity is the provisioner identity of a sidecar process, computed once at
// start as upstream does: the start time in milliseconds since the epoch, a
// random number below 10000 and the driver's name.
func Identity(start time.Time, random int, driverName string) string {
	return fmt.Sprintf("%d-%d-%s", start.UnixMilli(), random, driverName)
}

// volumeAttributes are the PV's volume attributes: the provisioner identity
// and the volume context the driver returned, which wins on a conflict.
func volumeAttributes(identity string, volumeContext map[string]string) map[string]string {
	attrs := map[string]string{IdentityKey: identity}
	maps.Copy(attrs, volumeContext)
	return attrs
}
