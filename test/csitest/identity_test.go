package csitest

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func TestStartServesOnAUnixSocket(t *testing.T) {
	d := Start(t, WithName("block.example.com"))
	if !strings.HasPrefix(d.Address(), "unix:///") {
		t.Fatalf("Address() = %q, want a unix:/// URL", d.Address())
	}
	conn, err := grpc.NewClient(d.Address(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dial %s: %v", d.Address(), err)
	}
	t.Cleanup(func() { _ = conn.Close() })

	info, err := csi.NewIdentityClient(conn).GetPluginInfo(t.Context(), &csi.GetPluginInfoRequest{})
	if err != nil {
		t.Fatalf("GetPluginInfo: %v", err)
	}
	if info.GetName() != "block.example.com" || info.GetVendorVersion() != Version {
		t.Errorf("GetPluginInfo = %v, want name block.example.com and version %s", info, Version)
	}
}

func TestStartWorksWhenTheTempDirIsBeyondTheSocketPathLimit(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("x", maxSocketPath))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", long)
	t.Run("subtest", func(t *testing.T) {
		d := Start(t)
		path := strings.TrimPrefix(d.Address(), "unix://")
		if len(path) > maxSocketPath {
			t.Fatalf("socket path has %d bytes, want at most %d", len(path), maxSocketPath)
		}
		conn, err := net.Dial("unix", path)
		if err != nil {
			t.Fatalf("dial %s: %v", path, err)
		}
		_ = conn.Close()
	})
}

func TestProbeIsReady(t *testing.T) {
	resp, err := Start(t).Probe(t.Context(), &csi.ProbeRequest{})
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if !resp.GetReady().GetValue() {
		t.Errorf("Probe reports not ready")
	}
}

func TestPluginCapabilities(t *testing.T) {
	tests := map[string]struct {
		opts []Option
		want []csi.PluginCapability_Service_Type
	}{
		"default driver has only a controller service": {
			want: []csi.PluginCapability_Service_Type{csi.PluginCapability_Service_CONTROLLER_SERVICE},
		},
		"driver with accessibility constraints advertises them": {
			opts: []Option{WithAccessibilityConstraints(true)},
			want: []csi.PluginCapability_Service_Type{
				csi.PluginCapability_Service_CONTROLLER_SERVICE,
				csi.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, err := Start(t, tc.opts...).GetPluginCapabilities(t.Context(), &csi.GetPluginCapabilitiesRequest{})
			if err != nil {
				t.Fatalf("GetPluginCapabilities: %v", err)
			}
			var got []csi.PluginCapability_Service_Type
			for _, c := range resp.GetCapabilities() {
				got = append(got, c.GetService().GetType())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("GetPluginCapabilities = %v, want %v", got, tc.want)
			}
		})
	}
}
