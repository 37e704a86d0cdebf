package localdriver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/kubernetes-csi/csi-lib-utils/protosanitizer"
	"google.golang.org/grpc"
	"k8s.io/klog/v2"
)

// stopGracePeriod is how long Serve waits for calls in flight when its
// context is done before it cancels them.
const stopGracePeriod = 10 * time.Second

// Run serves the driver that cfg describes on cfg.Endpoint until ctx is
// done, and then stops it and removes the socket. A stale socket at the
// endpoint, left by a driver that did not stop cleanly, is replaced.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("invalid configuration: %w", err)
	}
	logger := klog.FromContext(ctx)
	d, err := New(ctx, cfg)
	if err != nil {
		return err
	}
	path, err := socketPath(cfg.Endpoint)
	if err != nil {
		return err
	}
	if err := removeStaleSocket(path); err != nil {
		return err
	}
	lis, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", path, err)
	}
	defer func() {
		// Closing a unix listener normally removes its socket; this covers
		// the cases where it did not.
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			logger.Error(err, "Could not remove socket", "path", path)
		}
	}()
	logger.Info("Serving CSI driver", "name", cfg.Name, "nodeID", cfg.NodeID, "endpoint", path, "stateDir", cfg.StateDir)
	if err := d.Serve(ctx, lis); err != nil {
		return err
	}
	logger.Info("Stopped CSI driver")
	return nil
}

// Serve serves the Identity, Controller and Node services on lis until ctx
// is done or serving fails, and closes lis. Calls are logged at verbosity 5
// with their secrets stripped, and failed calls at verbosity 2, through the
// logger in ctx. With Config.CallLog each call is journaled, and with
// Config.FaultsFile the file's fault rules apply to it.
func (d *Driver) Serve(ctx context.Context, lis net.Listener) error {
	interceptors := []grpc.UnaryServerInterceptor{logCalls(klog.FromContext(ctx))}
	if d.callLog != "" {
		interceptors = append(interceptors, journalCalls(d.callLog))
	}
	if d.faultsFile != "" {
		interceptors = append(interceptors, injectFaults(d.faultsFile))
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(interceptors...))
	csi.RegisterIdentityServer(srv, d)
	csi.RegisterControllerServer(srv, d)
	csi.RegisterNodeServer(srv, d)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve on %s: %w", lis.Addr(), err)
	case <-ctx.Done():
	}
	stopped := make(chan struct{})
	go func() {
		srv.GracefulStop()
		close(stopped)
	}()
	timer := time.NewTimer(stopGracePeriod)
	defer timer.Stop()
	select {
	case <-stopped:
	case <-timer.C:
		srv.Stop()
		<-stopped
	}
	// Serve returns nil after GracefulStop or Stop, and ErrServerStopped
	// (having closed lis) if they ran before it started.
	if err := <-served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("serve on %s: %w", lis.Addr(), err)
	}
	return nil
}

// logCalls returns an interceptor that puts base, with the method name, into
// each call's context for the handlers to log with.
func logCalls(base klog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		logger := base.WithValues("method", info.FullMethod)
		ctx = klog.NewContext(ctx, logger)
		logger.V(5).Info("CSI call", "request", protosanitizer.StripSecrets(req))
		resp, err := handler(ctx, req)
		if err != nil {
			logger.V(2).Info("CSI call failed", "err", err)
			return nil, err
		}
		logger.V(5).Info("CSI call succeeded", "response", protosanitizer.StripSecrets(resp))
		return resp, nil
	}
}

// socketPath returns the file system path of an endpoint given as a path,
// as unix:///path or as unix:path.
func socketPath(endpoint string) (string, error) {
	path := endpoint
	if rest, ok := strings.CutPrefix(endpoint, "unix://"); ok {
		path = rest
	} else if rest, ok := strings.CutPrefix(endpoint, "unix:"); ok {
		path = rest
	} else if strings.Contains(endpoint, "://") {
		return "", fmt.Errorf("endpoint %q: only unix sockets are supported", endpoint)
	}
	if path == "" {
		return "", fmt.Errorf("endpoint %q names no socket path", endpoint)
	}
	return path, nil
}

// removeStaleSocket removes a socket at path so that a new listener can take
// its place, and refuses to remove anything that is not a socket.
func removeStaleSocket(path string) error {
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("inspect endpoint: %w", err)
	case info.Mode()&fs.ModeSocket == 0:
		return fmt.Errorf("endpoint %s exists and is not a socket", path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove stale socket: %w", err)
	}
	return nil
}
