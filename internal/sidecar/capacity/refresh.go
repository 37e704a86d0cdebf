package capacity

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// RefreshClass asks GetCapacity again, now rather than at the next poll, for
// every segment of a storage class. Upstream does so after a volume of the
// class was provisioned without a node affinity (network storage, where the
// class selects the pool) and after provisioning failed.
func (c *Controller) RefreshClass(className string) {
	c.refresh(func(k Key) bool { return k.Class == className })
}

// RefreshTopology asks GetCapacity again, now rather than at the next poll,
// for every class in the segments that a volume's node affinity names.
// Upstream does so after a volume with that affinity was provisioned or
// deleted. Terms that name no segment (not one value per key with operator
// In) are logged and skipped.
func (c *Controller) RefreshTopology(ctx context.Context, affinity *v1.VolumeNodeAffinity) {
	if affinity == nil || affinity.Required == nil {
		return
	}
	segments := map[string]bool{}
	for _, term := range affinity.Required.NodeSelectorTerms {
		seg, err := SegmentFromTerm(term)
		if err != nil {
			klog.FromContext(ctx).V(3).Info("Not refreshing capacity for a node selector term that names no segment", "err", err)
			continue
		}
		segments[seg.ID()] = true
	}
	c.refresh(func(k Key) bool { return segments[k.Segment] })
}
