package localdriver

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// GetCapacity reports what is left of the pool: Config.CapacityBytes less
// what the volumes and snapshots hold, never below 0. A request for a
// topology segment the storage is not in, or for volume capabilities the
// driver cannot provide, gets 0: no volume of that kind fits there. The
// parameters are not used; every class draws on the one pool.
func (d *Driver) GetCapacity(_ context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	if checkCapabilities(req.GetVolumeCapabilities()) != nil || !d.inSegment(req.GetAccessibleTopology().GetSegments()) {
		return &csi.GetCapacityResponse{}, nil
	}
	d.mu.Lock()
	var used int64
	for _, v := range d.volumes {
		used += v.CapacityBytes
	}
	for _, s := range d.snapshots {
		used += s.SizeBytes
	}
	d.mu.Unlock()
	return &csi.GetCapacityResponse{AvailableCapacity: max(0, d.capacityBytes-used)}, nil
}

// inSegment reports whether the storage is reachable from a topology
// segment: every label of the segment has the driver's value. Without a
// topology of its own the driver is reachable from everywhere, and an empty
// segment asks for all of the storage.
func (d *Driver) inSegment(segment map[string]string) bool {
	if d.topology == nil {
		return true
	}
	for k, v := range segment {
		if mine, ok := d.topology[k]; !ok || mine != v {
			return false
		}
	}
	return true
}

// accessibleTopology is the driver's segment as CSI reports it, nil without
// one.
func (d *Driver) accessibleTopology() *csi.Topology {
	if d.topology == nil {
		return nil
	}
	return &csi.Topology{Segments: maps.Clone(d.topology)}
}

// checkAccessibility refuses a volume that must be accessible only where
// the storage is not: with a topology configured, one of the requisite
// segments (if any are given) must contain the driver's segment. The CSI
// spec asks for ResourceExhausted then.
func (d *Driver) checkAccessibility(req *csi.TopologyRequirement) error {
	if d.topology == nil || len(req.GetRequisite()) == 0 {
		return nil
	}
	for _, t := range req.GetRequisite() {
		if d.inSegment(t.GetSegments()) {
			return nil
		}
	}
	return status.Errorf(codes.ResourceExhausted, "the storage is only accessible in topology segment %v, which no requisite segment %v contains",
		d.topology, req.GetRequisite())
}

// ParseTopology reads a topology segment written as
// "key=value[,key=value...]", as the command's --topology flag takes it.
func ParseTopology(s string) (map[string]string, error) {
	topology := map[string]string{}
	for pair := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("topology label %q is not key=value", pair)
		}
		if _, dup := topology[k]; dup {
			return nil, fmt.Errorf("topology names %q twice", k)
		}
		topology[k] = v
	}
	return topology, nil
}
