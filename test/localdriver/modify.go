package localdriver

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
)

// Mutable parameter keys: what a VolumeAttributesClass for this driver may
// set, as the performance settings a cloud disk can change in place. Each
// value is a positive integer. Like capacity, they are bookkeeping only:
// the driver records them and changes nothing else.
const (
	// ParameterIOPS is the volume's I/O operations per second.
	ParameterIOPS = "iops"
	// ParameterThroughput is the volume's throughput in MiB/s.
	ParameterThroughput = "throughput"
)

// mutableKeys are the keys checkMutableParameters accepts.
var mutableKeys = []string{ParameterIOPS, ParameterThroughput}

// ControllerModifyVolume changes the mutable parameters of a volume: the
// keys the request names get its values, the others keep theirs. A key the
// driver does not know, or a value that is not a positive integer, is
// InvalidArgument, as the CSI spec asks; a request without parameters
// changes nothing.
func (d *Driver) ControllerModifyVolume(ctx context.Context, req *csi.ControllerModifyVolumeRequest) (*csi.ControllerModifyVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID is required")
	}
	if err := checkMutableParameters(req.GetMutableParameters()); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()

	vol, ok := d.volumes[req.GetVolumeId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "volume %q does not exist", req.GetVolumeId())
	}
	changed := *vol
	changed.MutableParameters = maps.Clone(vol.MutableParameters)
	if changed.MutableParameters == nil {
		changed.MutableParameters = map[string]string{}
	}
	maps.Copy(changed.MutableParameters, req.GetMutableParameters())
	if maps.Equal(changed.MutableParameters, vol.MutableParameters) {
		return &csi.ControllerModifyVolumeResponse{}, nil
	}
	if err := writeRecord(d.layout.volumeMeta(vol.ID), &changed); err != nil {
		return nil, status.Errorf(codes.Internal, "modify volume %q: %v", vol.ID, err)
	}
	d.volumes[vol.ID] = &changed
	klog.FromContext(ctx).Info("Modified volume", "volumeID", vol.ID, "mutableParameters", changed.MutableParameters)
	return &csi.ControllerModifyVolumeResponse{}, nil
}

// checkMutableParameters returns InvalidArgument unless every key is one of
// mutableKeys with a positive integer value. CreateVolume and
// ControllerModifyVolume both check their parameters with it.
func checkMutableParameters(params map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if !slices.Contains(mutableKeys, k) {
			return status.Errorf(codes.InvalidArgument, "mutable parameter %q is not supported; supported are %v", k, mutableKeys)
		}
		if n, err := strconv.ParseInt(params[k], 10, 64); err != nil || n <= 0 {
			return status.Errorf(codes.InvalidArgument, "mutable parameter %s=%q is not a positive integer", k, params[k])
		}
	}
	return nil
}

// RecordedMutableParameters returns the mutable parameters that the driver
// has recorded for the volume whose data is in volumeDir (Driver.VolumeDir,
// or localenv's Stack.VolumeDir from outside the driver's process): those
// of CreateVolume as ControllerModifyVolume last changed them, nil for
// none. End-to-end tests read a running driver's state with it.
func RecordedMutableParameters(volumeDir string) (map[string]string, error) {
	r, err := readRecord[volumeRecord](volumeDir + metaSuffix)
	if err != nil {
		return nil, fmt.Errorf("volume %s: %w", volumeDir, err)
	}
	return r.MutableParameters, nil
}
