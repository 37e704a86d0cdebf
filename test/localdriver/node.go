package localdriver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
)

// NodeGetInfo reports the configured node ID, no volume limit, and the
// configured topology, if any.
func (d *Driver) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: d.nodeID, AccessibleTopology: d.accessibleTopology()}, nil
}

// NodeGetCapabilities reports no optional Node RPCs: publishing is a
// symbolic link, so there is nothing to stage.
func (d *Driver) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{}, nil
}

// NodePublishVolume makes the target path a symbolic link to the volume's
// directory. Its parent must exist, as the spec says the CO ensures. An
// empty directory or file at the target path (which a CO may have created)
// is replaced; a link to the volume is success, so the call is idempotent.
// The readonly flag is not enforced.
func (d *Driver) NodePublishVolume(ctx context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	switch {
	case req.GetVolumeId() == "":
		return nil, status.Error(codes.InvalidArgument, "volume ID is required")
	case req.GetTargetPath() == "":
		return nil, status.Error(codes.InvalidArgument, "target path is required")
	case req.GetVolumeCapability() == nil:
		return nil, status.Error(codes.InvalidArgument, "volume capability is required")
	}
	if err := checkCapability(req.GetVolumeCapability()); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}

	d.mu.Lock()
	defer d.mu.Unlock()

	vol, ok := d.volumes[req.GetVolumeId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "volume %q does not exist", req.GetVolumeId())
	}
	dir, target := d.layout.volumeDir(vol.ID), req.GetTargetPath()
	if err := publish(dir, target); err != nil {
		return nil, err
	}
	klog.FromContext(ctx).Info("Published volume", "volumeID", vol.ID, "targetPath", target)
	return &csi.NodePublishVolumeResponse{}, nil
}

// NodeUnpublishVolume removes the link NodePublishVolume made. A target
// path that does not exist, or that links to another volume, means the
// volume is not published there, which is success.
func (d *Driver) NodeUnpublishVolume(ctx context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	switch {
	case req.GetVolumeId() == "":
		return nil, status.Error(codes.InvalidArgument, "volume ID is required")
	case req.GetTargetPath() == "":
		return nil, status.Error(codes.InvalidArgument, "target path is required")
	}

	d.mu.Lock()
	defer d.mu.Unlock()

	vol, ok := d.volumes[req.GetVolumeId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "volume %q does not exist", req.GetVolumeId())
	}
	removed, err := unpublish(d.layout.volumeDir(vol.ID), req.GetTargetPath())
	if err != nil {
		return nil, err
	}
	if removed {
		klog.FromContext(ctx).Info("Unpublished volume", "volumeID", vol.ID, "targetPath", req.GetTargetPath())
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

// publish links target to dir, as NodePublishVolume describes.
func publish(dir, target string) error {
	info, err := os.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// The usual case: the SP creates the target path.
	case err != nil:
		return status.Errorf(codes.Internal, "inspect target path: %v", err)
	case info.Mode()&fs.ModeSymlink != 0:
		link, err := os.Readlink(target)
		if err != nil {
			return status.Errorf(codes.Internal, "read target path: %v", err)
		}
		if link == dir {
			return nil
		}
		return status.Errorf(codes.FailedPrecondition, "target path %s links to %s, not to this volume", target, link)
	default:
		if err := removeIfEmpty(target, info); err != nil {
			return err
		}
	}
	if err := os.Symlink(dir, target); err != nil {
		return status.Errorf(codes.Internal, "link target path to volume: %v", err)
	}
	return nil
}

// unpublish removes target if it is a link to dir, and reports whether it
// did.
func unpublish(dir, target string) (bool, error) {
	info, err := os.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, status.Errorf(codes.Internal, "inspect target path: %v", err)
	case info.Mode()&fs.ModeSymlink == 0:
		// Perhaps the CO's own empty directory after a failed publish;
		// the spec asks the SP to remove what it finds there.
		return true, removeIfEmpty(target, info)
	}
	link, err := os.Readlink(target)
	if err != nil {
		return false, status.Errorf(codes.Internal, "read target path: %v", err)
	}
	if link != dir {
		return false, nil
	}
	if err := os.Remove(target); err != nil {
		return false, status.Errorf(codes.Internal, "remove target path: %v", err)
	}
	return true, nil
}

// removeIfEmpty removes an empty directory or an empty regular file at
// path, and refuses with FailedPrecondition to remove anything else.
func removeIfEmpty(path string, info fs.FileInfo) error {
	empty, err := isEmpty(path, info)
	if err != nil {
		return status.Errorf(codes.Internal, "inspect target path: %v", err)
	}
	if !empty {
		return status.Errorf(codes.FailedPrecondition, "target path %s is in use: it is not empty", path)
	}
	if err := os.Remove(path); err != nil {
		return status.Errorf(codes.Internal, "remove target path: %v", err)
	}
	return nil
}

func isEmpty(path string, info fs.FileInfo) (bool, error) {
	switch {
	case info.IsDir():
		entries, err := os.ReadDir(path)
		if err != nil {
			return false, fmt.Errorf("read directory: %w", err)
		}
		return len(entries) == 0, nil
	case info.Mode().IsRegular():
		return info.Size() == 0, nil
	default:
		return false, nil
	}
}
