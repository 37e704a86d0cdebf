// Package csi is the sidecar's narrow client for a CSI driver's Identity and
// Controller services (and NodeGetInfo, for --node-deployment), and the only
// package that speaks gRPC.
//
// It owns the connection, bounds every call by a per-call timeout derived
// from the caller's context, logs requests only through protosanitizer
// (CreateVolume carries secrets), and classifies errors with IsFinal so the
// layers above can tell "failed" from "may still be in progress".
package csi

import (
	"context"
	"fmt"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/kubernetes-csi/csi-lib-utils/connection"
	"github.com/kubernetes-csi/csi-lib-utils/metrics"
	"github.com/kubernetes-csi/csi-lib-utils/rpc"
	"google.golang.org/grpc"
)

// DefaultTimeout bounds each CSI call when Config.Timeout is not set. It
// matches the upstream csi-provisioner's --timeout default.
const DefaultTimeout = 10 * time.Second

// Config describes how to reach a CSI driver.
type Config struct {
	// Address is the driver's endpoint: an absolute path to a unix socket
	// or a gRPC target such as "unix:///csi/csi.sock".
	Address string
	// Timeout bounds each individual CSI call (and each single probe).
	// Zero means DefaultTimeout.
	Timeout time.Duration
	// MetricsManager records per-call metrics; nil disables them.
	MetricsManager metrics.CSIMetricsManager
	// ExitOnConnectionLoss makes the process exit when the connection to
	// the driver is lost, as the upstream provisioner does: a restarted
	// driver may have lost in-flight operations, and a restart of the
	// sidecar re-reads its identity and capabilities. Tests leave it off.
	ExitOnConnectionLoss bool
}

// Client calls a CSI driver's Identity and Controller services. It is safe
// for concurrent use.
type Client struct {
	conn       *grpc.ClientConn
	identity   csi.IdentityClient
	controller csi.ControllerClient
	node       csi.NodeClient
	timeout    time.Duration
}

// Connect dials the driver described by cfg and blocks until the connection
// is established, ctx is done, or csi-lib-utils' connect timeout expires. The
// connection logs every gRPC message at V(5) with secrets stripped.
func Connect(ctx context.Context, cfg Config) (*Client, error) {
	var opts []connection.Option
	if cfg.ExitOnConnectionLoss {
		opts = append(opts, connection.OnConnectionLoss(connection.ExitOnConnectionLoss()))
	}
	conn, err := connection.Connect(ctx, cfg.Address, cfg.MetricsManager, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to CSI driver at %s: %w", cfg.Address, err)
	}
	return NewClient(conn, cfg.Timeout), nil
}

// NewClient wraps an established connection, e.g. one a test dialed itself.
// The Client takes ownership of conn and closes it in Close. A timeout of
// zero or less means DefaultTimeout.
func NewClient(conn *grpc.ClientConn, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{
		conn:       conn,
		identity:   csi.NewIdentityClient(conn),
		controller: csi.NewControllerClient(conn),
		node:       csi.NewNodeClient(conn),
		timeout:    timeout,
	}
}

// Close closes the connection to the driver.
func (c *Client) Close() error {
	if err := c.conn.Close(); err != nil {
		return fmt.Errorf("close CSI connection: %w", err)
	}
	return nil
}

// Probe blocks until the driver reports ready, probing once a second with
// the per-call timeout, and gives up when ctx is done or a probe fails with
// anything but a timeout.
func (c *Client) Probe(ctx context.Context) error {
	if err := rpc.ProbeForever(ctx, c.conn, c.timeout); err != nil {
		return fmt.Errorf("wait for CSI driver to become ready: %w", err)
	}
	return nil
}

// DriverName returns the name the driver reports in GetPluginInfo.
func (c *Client) DriverName(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	name, err := rpc.GetDriverName(ctx, c.conn)
	if err != nil {
		return "", fmt.Errorf("get CSI driver name: %w", err)
	}
	return name, nil
}
