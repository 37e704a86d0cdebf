package nodedeployment

import (
	"context"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// CapacityFunc tells whether this node has room for a claim now. A node
// checks it just before it claims a claim (upstream's README: "external-
// provisioner checks with GetCapacity before attempting to own a PVC"), so
// that a full node leaves the claim to the others instead of claiming it and
// failing CreateVolume. An error does not stop the claiming: provisioning
// will then most likely fail the same way and tell the user with an event.
type CapacityFunc func(ctx context.Context, claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass) (bool, error)

// AvailableFunc is one GetCapacity call for a topology segment (nil: none),
// with the volume capabilities and parameters CreateVolume would get.
type AvailableFunc func(ctx context.Context, segment *csi.Topology) (int64, error)

// HasCapacity is upstream's capacity check for a claim of requested bytes
// with the requisite topology CreateVolume would get on this node: nothing
// requested always fits; otherwise the claim fits if some requisite segment
// (or, without any, the driver as a whole) reports at least that much
// available. The first GetCapacity error is returned.
func HasCapacity(ctx context.Context, requested int64, requisite []*csi.Topology, available AvailableFunc) (bool, error) {
	if requested == 0 {
		return true, nil
	}
	segments := requisite
	if len(segments) == 0 {
		segments = []*csi.Topology{nil}
	}
	for _, segment := range segments {
		bytes, err := available(ctx, segment)
		if err != nil {
			return false, fmt.Errorf("GetCapacity: %w", err)
		}
		if requested <= bytes {
			return true, nil
		}
	}
	return false, nil
}
