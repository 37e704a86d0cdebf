package csitest

import (
	"context"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// ControllerGetCapabilities reports the configured controller capabilities.
func (d *Driver) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	resp := &csi.ControllerGetCapabilitiesResponse{}
	for _, c := range d.controllerCaps {
		resp.Capabilities = append(resp.Capabilities, &csi.ControllerServiceCapability{
			Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{Type: c}},
		})
	}
	return resp, nil
}

// CreateVolume records the request, gives the CreateVolumeHook a chance to
// handle it, and otherwise creates a volume the way the CSI spec asks a
// driver to: idempotent by name, NotFound for an unknown content source,
// OutOfRange for a capacity range that cannot hold the source.
func (d *Driver) CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	d.mu.Lock()
	d.createRequests = append(d.createRequests, proto.CloneOf(req))
	hook := d.createHook
	d.mu.Unlock()

	if hook != nil {
		// Outside the lock: a hook may block until ctx is done.
		if resp, err, handled := hook(ctx, req); handled {
			if err == nil && resp.GetVolume() != nil {
				d.mu.Lock()
				d.addVolume(req.GetName(), proto.CloneOf(resp.GetVolume()))
				d.mu.Unlock()
			}
			return resp, err
		}
	}
	return d.Create(req)
}

// Create creates the volume req asks for, as CreateVolume does without a
// hook, but without recording the request. A hook calls it to create a
// volume and answer something else, e.g. a timeout.
func (d *Driver) Create(req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if err := validateCreateVolume(req); err != nil {
		return nil, err
	}

	d.mu.Lock()
	defer d.mu.Unlock()

	if id, ok := d.volumeByName[req.GetName()]; ok {
		if vol, ok := d.volumes[id]; ok {
			if err := compatible(vol, req); err != nil {
				return nil, err
			}
			return &csi.CreateVolumeResponse{Volume: proto.CloneOf(vol)}, nil
		}
	}

	sourceSize, err := d.sourceSize(req.GetVolumeContentSource())
	if err != nil {
		return nil, err
	}
	capacity, err := capacityFor(req.GetCapacityRange(), sourceSize)
	if err != nil {
		return nil, err
	}

	d.nextID++
	vol := &csi.Volume{
		VolumeId:      fmt.Sprintf("vol-%d", d.nextID),
		CapacityBytes: capacity,
		VolumeContext: cloneMap(req.GetParameters()),
		ContentSource: proto.CloneOf(req.GetVolumeContentSource()),
	}
	if d.topology != nil {
		vol.AccessibleTopology = []*csi.Topology{{Segments: cloneMap(d.topology)}}
	}
	d.addVolume(req.GetName(), vol)
	return &csi.CreateVolumeResponse{Volume: proto.CloneOf(vol)}, nil
}

// GetCapacity records the request and answers it with the GetCapacityHook,
// or Unimplemented without one.
func (d *Driver) GetCapacity(ctx context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	d.mu.Lock()
	d.capacityReqs = append(d.capacityReqs, proto.CloneOf(req))
	hook := d.capacityHook
	d.mu.Unlock()

	if hook == nil {
		return nil, status.Error(codes.Unimplemented, "GetCapacity is not implemented: the test set no GetCapacityHook")
	}
	// Outside the lock: a hook may block until ctx is done.
	return hook(ctx, req)
}

// DeleteVolume records the request and removes the volume. Deleting an
// unknown volume succeeds, as the CSI spec requires.
func (d *Driver) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deleteRequests = append(d.deleteRequests, proto.CloneOf(req))

	id := req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is required")
	}
	delete(d.volumes, id)
	for name, volID := range d.volumeByName {
		if volID == id {
			delete(d.volumeByName, name)
		}
	}
	return &csi.DeleteVolumeResponse{}, nil
}

// addVolume registers vol as created for name. The caller holds d.mu.
func (d *Driver) addVolume(name string, vol *csi.Volume) {
	d.volumes[vol.GetVolumeId()] = vol
	if name != "" {
		d.volumeByName[name] = vol.GetVolumeId()
	}
}

// sourceSize returns the size of the snapshot or volume a new volume is
// created from, or 0 without a source. The caller holds d.mu.
func (d *Driver) sourceSize(src *csi.VolumeContentSource) (int64, error) {
	if src == nil {
		return 0, nil
	}
	switch {
	case src.GetSnapshot() != nil:
		id := src.GetSnapshot().GetSnapshotId()
		size, ok := d.snapshots[id]
		if !ok {
			return 0, status.Errorf(codes.NotFound, "snapshot %q not found", id)
		}
		return size, nil
	case src.GetVolume() != nil:
		id := src.GetVolume().GetVolumeId()
		vol, ok := d.volumes[id]
		if !ok {
			return 0, status.Errorf(codes.NotFound, "source volume %q not found", id)
		}
		return vol.GetCapacityBytes(), nil
	default:
		return 0, status.Error(codes.InvalidArgument, "volume content source has neither a snapshot nor a volume")
	}
}

func validateCreateVolume(req *csi.CreateVolumeRequest) error {
	if req.GetName() == "" {
		return status.Error(codes.InvalidArgument, "name is required")
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return status.Error(codes.InvalidArgument, "volume capabilities are required")
	}
	for i, c := range req.GetVolumeCapabilities() {
		if c.GetAccessMode() == nil || (c.GetBlock() == nil && c.GetMount() == nil) {
			return status.Errorf(codes.InvalidArgument, "volume capability %d needs an access mode and an access type", i)
		}
	}
	return nil
}

// capacityFor returns the capacity of a new volume: the required bytes, or
// the source size when that is larger and no size was required.
func capacityFor(r *csi.CapacityRange, sourceSize int64) (int64, error) {
	required, limit := r.GetRequiredBytes(), r.GetLimitBytes()
	if limit > 0 && required > limit {
		return 0, status.Errorf(codes.OutOfRange, "required bytes %d exceed limit bytes %d", required, limit)
	}
	if required > 0 && required < sourceSize {
		return 0, status.Errorf(codes.OutOfRange, "required bytes %d are smaller than the source size %d", required, sourceSize)
	}
	if limit > 0 && limit < sourceSize {
		return 0, status.Errorf(codes.OutOfRange, "limit bytes %d are smaller than the source size %d", limit, sourceSize)
	}
	return max(required, sourceSize), nil
}

// compatible reports AlreadyExists when an existing volume with the
// requested name does not match the request, as the CSI spec asks.
func compatible(vol *csi.Volume, req *csi.CreateVolumeRequest) error {
	required, limit := req.GetCapacityRange().GetRequiredBytes(), req.GetCapacityRange().GetLimitBytes()
	if required > 0 && vol.GetCapacityBytes() < required || limit > 0 && vol.GetCapacityBytes() > limit {
		return status.Errorf(codes.AlreadyExists, "volume %q exists with capacity %d, incompatible with the requested range", req.GetName(), vol.GetCapacityBytes())
	}
	if !proto.Equal(vol.GetContentSource(), req.GetVolumeContentSource()) {
		return status.Errorf(codes.AlreadyExists, "volume %q exists with a different content source", req.GetName())
	}
	return nil
}
