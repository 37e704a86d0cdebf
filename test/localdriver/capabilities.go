package localdriver

import (
	"context"
	"errors"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// controllerCapabilities are the Controller RPCs the driver implements
// beyond the mandatory ones.
var controllerCapabilities = []csi.ControllerServiceCapability_RPC_Type{
	csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
	csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT,
	csi.ControllerServiceCapability_RPC_LIST_SNAPSHOTS,
	csi.ControllerServiceCapability_RPC_CLONE_VOLUME,
	csi.ControllerServiceCapability_RPC_GET_CAPACITY,
	csi.ControllerServiceCapability_RPC_MODIFY_VOLUME,
}

// ControllerGetCapabilities reports creating and deleting volumes and
// snapshots, listing snapshots, cloning, reporting capacity, and modifying
// volumes' mutable parameters.
func (d *Driver) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	resp := &csi.ControllerGetCapabilitiesResponse{}
	for _, c := range controllerCapabilities {
		resp.Capabilities = append(resp.Capabilities, &csi.ControllerServiceCapability{
			Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{Type: c}},
		})
	}
	return resp, nil
}

// ValidateVolumeCapabilities confirms the requested capabilities when the
// driver supports all of them, and otherwise says why not.
func (d *Driver) ValidateVolumeCapabilities(_ context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is required")
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "volume capabilities are required")
	}
	d.mu.Lock()
	_, ok := d.volumes[req.GetVolumeId()]
	d.mu.Unlock()
	if !ok {
		return nil, status.Errorf(codes.NotFound, "volume %q does not exist", req.GetVolumeId())
	}
	if err := checkCapabilities(req.GetVolumeCapabilities()); err != nil {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: err.Error()}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext:      req.GetVolumeContext(),
		VolumeCapabilities: req.GetVolumeCapabilities(),
		Parameters:         req.GetParameters(),
	}}, nil
}

// checkCapabilities returns an error naming the first capability the
// driver cannot provide.
func checkCapabilities(caps []*csi.VolumeCapability) error {
	for i, c := range caps {
		if err := checkCapability(c); err != nil {
			return fmt.Errorf("volume capability %d: %w", i, err)
		}
	}
	return nil
}

// checkCapability accepts Mount and Block volumes (both are directories
// here) with the access modes of a ReadWriteOnce or ReadOnly volume: the
// data lives on one machine, and the driver has no
// SINGLE_NODE_MULTI_WRITER capability.
func checkCapability(c *csi.VolumeCapability) error {
	if c == nil {
		return errors.New("capability is empty")
	}
	if c.GetMount() == nil && c.GetBlock() == nil {
		return errors.New("access type must be mount or block")
	}
	switch mode := c.GetAccessMode().GetMode(); mode {
	case csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
		csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY:
		return nil
	default:
		return fmt.Errorf("access mode %s is not supported", mode)
	}
}
