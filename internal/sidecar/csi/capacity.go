package csi

import (
	"context"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
)

// GetCapacity asks the driver how much storage is available for the
// request's parameters, volume capabilities and topology segment, bounded
// by the per-call timeout (upstream bounds it by --timeout too). The
// request carries no secrets; the connection logs it at V(5).
func (c *Client) GetCapacity(ctx context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.controller.GetCapacity(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("CSI GetCapacity: %w", err)
	}
	return resp, nil
}

// NodeGetInfo asks the driver's Node service which node it runs on and
// where that node's storage is accessible, bounded by the per-call timeout.
// Only a sidecar deployed next to the driver on each node
// (--node-deployment) calls it, once at start.
func (c *Client) NodeGetInfo(ctx context.Context) (*csi.NodeGetInfoResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.node.NodeGetInfo(ctx, &csi.NodeGetInfoRequest{})
	if err != nil {
		return nil, fmt.Errorf("CSI NodeGetInfo: %w", err)
	}
	return resp, nil
}
