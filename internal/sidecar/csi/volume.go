package csi

import (
	"context"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"k8s.io/klog/v2"
)

// CreateVolume asks the driver to create a volume, bounded by the per-call
// timeout. On error, use IsFinal to decide whether the volume may still be
// created by the driver: if not final, retry with the same request.
func (c *Client) CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	// The connection logs the request and response, secrets stripped.
	resp, err := c.controller.CreateVolume(ctx, req)
	if err != nil {
		logger.V(5).Info("CSI CreateVolume failed", "name", req.GetName(), "err", err, "final", IsFinal(err))
		return nil, fmt.Errorf("CSI CreateVolume %q: %w", req.GetName(), err)
	}
	return resp, nil
}

// DeleteVolume asks the driver to delete a volume, bounded by the per-call
// timeout. Deleting a volume that does not exist succeeds.
func (c *Client) DeleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) error {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	// The connection logs the request and response, secrets stripped.
	if _, err := c.controller.DeleteVolume(ctx, req); err != nil {
		logger.V(5).Info("CSI DeleteVolume failed", "volumeID", req.GetVolumeId(), "err", err)
		return fmt.Errorf("CSI DeleteVolume %q: %w", req.GetVolumeId(), err)
	}
	return nil
}
