package localdriver

import (
	"context"
	"maps"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
)

// CreateVolume creates a volume directory, filled with a copy of the
// content source if the request names one, and records the request's
// mutable parameters (see ControllerModifyVolume). It is idempotent by
// name: a second request for an existing name gets the same volume if the
// request is compatible with it, and AlreadyExists otherwise.
func (d *Driver) CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if err := validateCreateVolume(req); err != nil {
		return nil, err
	}
	if err := d.checkAccessibility(req.GetAccessibilityRequirements()); err != nil {
		return nil, err
	}
	logger := klog.FromContext(ctx)
	if id := req.GetVolumeContentSource().GetSnapshot().GetSnapshotId(); id != "" {
		defer d.markRestoring(id)()
	}
	if err := d.delayRestore(ctx, req); err != nil {
		return nil, err
	}

	d.mu.Lock()
	defer d.mu.Unlock()

	if id, ok := d.volumeByName[req.GetName()]; ok {
		vol := d.volumes[id]
		if err := compatible(vol, req); err != nil {
			return nil, err
		}
		return &csi.CreateVolumeResponse{Volume: d.csiVolume(vol)}, nil
	}

	src, err := d.resolveSource(req.GetVolumeContentSource())
	if err != nil {
		return nil, err
	}
	capacity, err := capacityFor(req.GetCapacityRange(), src.sizeBytes)
	if err != nil {
		return nil, err
	}

	vol := &volumeRecord{
		ID:                newVolumeID(),
		Name:              req.GetName(),
		CapacityBytes:     capacity,
		Source:            sourceFrom(req.GetVolumeContentSource()),
		CreationTime:      time.Now().UTC(),
		MutableParameters: req.GetMutableParameters(),
	}
	if err := createObject(ctx, d.layout.volumeDir(vol.ID), src.dir, d.layout.volumeMeta(vol.ID), vol); err != nil {
		return nil, status.Errorf(codes.Internal, "create volume %q: %v", req.GetName(), err)
	}
	d.volumes[vol.ID] = vol
	d.volumeByName[vol.Name] = vol.ID
	logger.Info("Created volume", "volumeID", vol.ID, "name", vol.Name, "capacityBytes", vol.CapacityBytes, "source", src.description)
	return &csi.CreateVolumeResponse{Volume: d.csiVolume(vol)}, nil
}

// DeleteVolume removes a volume and its data. Deleting a volume that does
// not exist succeeds. Snapshots of the volume are copies and stay.
func (d *Driver) DeleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is required")
	}
	d.mu.Lock()
	defer d.mu.Unlock()

	vol, ok := d.volumes[req.GetVolumeId()]
	if !ok {
		return &csi.DeleteVolumeResponse{}, nil
	}
	if err := removeObject(d.layout.volumeMeta(vol.ID), d.layout.volumeDir(vol.ID)); err != nil {
		return nil, status.Errorf(codes.Internal, "delete volume %q: %v", vol.ID, err)
	}
	delete(d.volumes, vol.ID)
	delete(d.volumeByName, vol.Name)
	klog.FromContext(ctx).Info("Deleted volume", "volumeID", vol.ID, "name", vol.Name)
	return &csi.DeleteVolumeResponse{}, nil
}

// csiVolume is the volume as CreateVolume reports it: accessible in the
// driver's topology segment, if it has one.
func (d *Driver) csiVolume(v *volumeRecord) *csi.Volume {
	vol := &csi.Volume{
		VolumeId:      v.ID,
		CapacityBytes: v.CapacityBytes,
		ContentSource: v.Source.contentSource(),
	}
	if top := d.accessibleTopology(); top != nil {
		vol.AccessibleTopology = []*csi.Topology{top}
	}
	return vol
}

// validateCreateVolume checks what CreateVolume needs before it looks at
// any state.
func validateCreateVolume(req *csi.CreateVolumeRequest) error {
	if req.GetName() == "" {
		return status.Error(codes.InvalidArgument, "volume name is required")
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return status.Error(codes.InvalidArgument, "volume capabilities are required")
	}
	if err := checkCapabilities(req.GetVolumeCapabilities()); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	if err := checkMutableParameters(req.GetMutableParameters()); err != nil {
		return err
	}
	if rng := req.GetCapacityRange(); rng.GetRequiredBytes() < 0 || rng.GetLimitBytes() < 0 {
		return status.Error(codes.InvalidArgument, "capacity range must not be negative")
	} else if rng.GetLimitBytes() > 0 && rng.GetRequiredBytes() > rng.GetLimitBytes() {
		return status.Errorf(codes.InvalidArgument, "required bytes %d exceed limit bytes %d", rng.GetRequiredBytes(), rng.GetLimitBytes())
	}
	if src := req.GetVolumeContentSource(); src != nil {
		switch {
		case src.GetSnapshot() != nil && src.GetSnapshot().GetSnapshotId() == "":
			return status.Error(codes.InvalidArgument, "content source snapshot ID is empty")
		case src.GetVolume() != nil && src.GetVolume().GetVolumeId() == "":
			return status.Error(codes.InvalidArgument, "content source volume ID is empty")
		case src.GetSnapshot() == nil && src.GetVolume() == nil:
			return status.Error(codes.InvalidArgument, "content source has no snapshot and no volume")
		}
	}
	return nil
}

// source is a resolved content source: where to copy the data from and how
// big the new volume must at least be.
type source struct {
	dir         string // empty for a new, empty volume
	sizeBytes   int64
	description string // for logs
}

// resolveSource finds the snapshot or volume a CreateVolume request names.
// The caller holds d.mu.
func (d *Driver) resolveSource(src *csi.VolumeContentSource) (source, error) {
	switch {
	case src.GetSnapshot() != nil:
		id := src.GetSnapshot().GetSnapshotId()
		snap, ok := d.snapshots[id]
		if !ok {
			return source{}, status.Errorf(codes.NotFound, "source snapshot %q does not exist", id)
		}
		return source{dir: d.layout.snapshotDir(id), sizeBytes: snap.SizeBytes, description: "snapshot " + id}, nil
	case src.GetVolume() != nil:
		id := src.GetVolume().GetVolumeId()
		vol, ok := d.volumes[id]
		if !ok {
			return source{}, status.Errorf(codes.NotFound, "source volume %q does not exist", id)
		}
		return source{dir: d.layout.volumeDir(id), sizeBytes: vol.CapacityBytes, description: "volume " + id}, nil
	default:
		return source{description: "none"}, nil
	}
}

// capacityFor decides the capacity of a new volume: the required bytes if
// the request names them, and otherwise DefaultCapacityBytes or the
// source's size, whichever is larger, within the limit. A range that cannot
// hold the source (sourceSize bytes; 0 for an empty volume) is OutOfRange,
// as the CSI spec asks. The range must already be valid
// (validateCreateVolume).
func capacityFor(rng *csi.CapacityRange, sourceSize int64) (int64, error) {
	required, limit := rng.GetRequiredBytes(), rng.GetLimitBytes()
	if required > 0 && required < sourceSize {
		return 0, status.Errorf(codes.OutOfRange, "requested %d bytes, less than the %d bytes of the source", required, sourceSize)
	}
	if limit > 0 && limit < sourceSize {
		return 0, status.Errorf(codes.OutOfRange, "limit of %d bytes is less than the %d bytes of the source", limit, sourceSize)
	}
	if required > 0 {
		return required, nil
	}
	capacity := max(DefaultCapacityBytes, sourceSize)
	if limit > 0 && capacity > limit {
		capacity = limit
	}
	return capacity, nil
}

// compatible reports whether an existing volume satisfies a CreateVolume
// request for the same name, and AlreadyExists if not.
func compatible(vol *volumeRecord, req *csi.CreateVolumeRequest) error {
	rng := req.GetCapacityRange()
	if rng.GetRequiredBytes() > 0 && vol.CapacityBytes < rng.GetRequiredBytes() {
		return status.Errorf(codes.AlreadyExists, "volume %q exists with %d bytes, fewer than the %d required", req.GetName(), vol.CapacityBytes, rng.GetRequiredBytes())
	}
	if rng.GetLimitBytes() > 0 && vol.CapacityBytes > rng.GetLimitBytes() {
		return status.Errorf(codes.AlreadyExists, "volume %q exists with %d bytes, more than the limit of %d", req.GetName(), vol.CapacityBytes, rng.GetLimitBytes())
	}
	if want := sourceFrom(req.GetVolumeContentSource()); !sameSource(vol.Source, want) {
		return status.Errorf(codes.AlreadyExists, "volume %q exists with a different content source", req.GetName())
	}
	if !maps.Equal(vol.MutableParameters, req.GetMutableParameters()) {
		return status.Errorf(codes.AlreadyExists, "volume %q exists with different mutable parameters", req.GetName())
	}
	return nil
}

func sameSource(a, b *sourceRecord) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// delayRestore waits Config.RestoreDelay before a restore or clone, outside
// the driver's lock, and gives up when the caller does.
func (d *Driver) delayRestore(ctx context.Context, req *csi.CreateVolumeRequest) error {
	if d.restoreDelay <= 0 || req.GetVolumeContentSource() == nil {
		return nil
	}
	select {
	case <-time.After(d.restoreDelay):
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}

// markRestoring records a restore of snapshot id until the returned func is
// called.
func (d *Driver) markRestoring(id string) func() {
	d.mu.Lock()
	d.restoring[id]++
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.restoring[id]--; d.restoring[id] <= 0 {
			delete(d.restoring, id)
		}
	}
}
