package csitest

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
)

// maxSocketPath keeps socket paths below the unix(7) sun_path limit (108 bytes
// on Linux, 104 on macOS). t.TempDir() embeds the test name, which for
// sentence-named subtests can exceed it.
const maxSocketPath = 100

// Start serves a new Driver configured by opts on a unix socket in a
// temporary directory and stops it when the test ends. It fails the test if
// the socket cannot be created.
func Start(t testing.TB, opts ...Option) *Driver {
	t.Helper()

	d := &Driver{
		name:       DefaultName,
		pluginCaps: []csi.PluginCapability_Service_Type{csi.PluginCapability_Service_CONTROLLER_SERVICE},
		controllerCaps: []csi.ControllerServiceCapability_RPC_Type{
			csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
			csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT,
			csi.ControllerServiceCapability_RPC_CLONE_VOLUME,
		},
		snapshots:    map[string]int64{},
		volumes:      map[string]*csi.Volume{},
		volumeByName: map[string]string{},
	}
	for _, opt := range opts {
		opt(d)
	}

	path := socketPath(t)
	lis, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("csitest: listen on %s: %v", path, err)
	}
	d.address = "unix://" + path

	srv := grpc.NewServer()
	csi.RegisterIdentityServer(srv, d)
	csi.RegisterControllerServer(srv, d)
	go func() {
		// Serve returns when Stop closes the listener; nothing to report.
		_ = srv.Serve(lis)
	}()
	// Stop, not GracefulStop: a hook may block until its context is done,
	// and Stop cancels in-flight calls.
	t.Cleanup(srv.Stop)
	return d
}

// socketPath returns a path for the driver's socket, in t.TempDir() when that
// is short enough and in a short-named temporary directory otherwise, removed
// when the test ends.
func socketPath(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "csi.sock")
	if len(path) <= maxSocketPath {
		return path
	}
	base := os.TempDir()
	if len(base) > maxSocketPath/2 {
		// E.g. a long TMPDIR, as on macOS.
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "csitest")
	if err != nil {
		t.Fatalf("csitest: create socket directory: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return filepath.Join(dir, "csi.sock")
}
