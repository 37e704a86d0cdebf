package localdriver

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/klog/v2/ktesting"
)

// callTimeout bounds each call to a served driver, so that a test fails
// instead of hanging when the server never comes up.
const callTimeout = 30 * time.Second

func TestRunServesUntilCancelledAndRemovesTheSocket(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sock := filepath.Join(t.TempDir(), "csi.sock")
	cfg := Config{Endpoint: "unix://" + sock, StateDir: t.TempDir(), Name: "demo.csi.example.com", NodeID: "node-1"}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()

	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	callCtx, callCancel := context.WithTimeout(ctx, callTimeout)
	defer callCancel()
	// WaitForReady: Run may not be listening yet.
	info, err := csi.NewIdentityClient(conn).GetPluginInfo(callCtx, &csi.GetPluginInfoRequest{}, grpc.WaitForReady(true))
	if err != nil {
		t.Fatalf("GetPluginInfo: %v", err)
	}
	if info.GetName() != cfg.Name {
		t.Errorf("driver name = %q, want %q", info.GetName(), cfg.Name)
	}
	node, err := csi.NewNodeClient(conn).NodeGetInfo(callCtx, &csi.NodeGetInfoRequest{})
	if err != nil || node.GetNodeId() != "node-1" {
		t.Errorf("NodeGetInfo = %v, %v; want node-1", node, err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run returned %v after cancel, want nil", err)
		}
	case <-time.After(callTimeout):
		t.Fatal("Run did not return after its context was canceled")
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket still exists after Run returned (%v)", err)
	}
}

func TestRunReplacesAStaleSocket(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	sock := filepath.Join(t.TempDir(), "csi.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	// Leave the socket file behind, as a killed driver does.
	lis.(*net.UnixListener).SetUnlinkOnClose(false)
	_ = lis.Close()

	ctx, cancel := context.WithCancel(ctx)
	cancel() // Run sets up, serves, and stops at once.
	if err := Run(ctx, Config{Endpoint: sock, StateDir: t.TempDir(), Name: DefaultName, NodeID: "n"}); err != nil {
		t.Fatalf("Run over a stale socket: %v", err)
	}
}

func TestRunRefusesAnEndpointThatIsNotASocket(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	file := filepath.Join(t.TempDir(), "not-a-socket")
	writeFile(t, filepath.Dir(file), filepath.Base(file), "precious")
	if err := Run(ctx, Config{Endpoint: file, StateDir: t.TempDir(), Name: DefaultName, NodeID: "n"}); err == nil {
		t.Fatal("Run served over a regular file")
	}
	if got := readFile(t, filepath.Dir(file), filepath.Base(file)); got != "precious" {
		t.Errorf("the file at the endpoint was changed to %q", got)
	}
}

func TestSocketPath(t *testing.T) {
	tests := map[string]struct {
		endpoint string
		want     string
		wantErr  bool
	}{
		"a plain path is the socket":       {endpoint: "/csi/csi.sock", want: "/csi/csi.sock"},
		"a unix URL names the socket":      {endpoint: "unix:///csi/csi.sock", want: "/csi/csi.sock"},
		"the short unix form is accepted":  {endpoint: "unix:/csi/csi.sock", want: "/csi/csi.sock"},
		"a TCP endpoint is refused":        {endpoint: "tcp://127.0.0.1:10000", wantErr: true},
		"a unix URL without path is empty": {endpoint: "unix://", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := socketPath(tc.endpoint)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("socketPath(%q) = %q, %v; want %q, error %v", tc.endpoint, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	valid := func() Config {
		return Config{Endpoint: "/csi/csi.sock", StateDir: "/var/lib/local", Name: DefaultName, NodeID: "node-1"}
	}
	tests := map[string]struct {
		change  func(*Config)
		wantErr bool
	}{
		"a complete configuration is valid":         {change: func(*Config) {}},
		"an empty endpoint is invalid":              {change: func(c *Config) { c.Endpoint = "" }, wantErr: true},
		"a TCP endpoint is invalid":                 {change: func(c *Config) { c.Endpoint = "tcp://localhost:1" }, wantErr: true},
		"an empty state directory is invalid":       {change: func(c *Config) { c.StateDir = "" }, wantErr: true},
		"an empty node ID is invalid":               {change: func(c *Config) { c.NodeID = "" }, wantErr: true},
		"a driver name with a slash is invalid":     {change: func(c *Config) { c.Name = "local/csi" }, wantErr: true},
		"a driver name of 64 characters is invalid": {change: func(c *Config) { c.Name = strings.Repeat("a", 64) }, wantErr: true},
		"a driver name ending in a dot is invalid":  {change: func(c *Config) { c.Name = "local." }, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := valid()
			tc.change(&cfg)
			if err := cfg.Validate(); (err != nil) != tc.wantErr {
				t.Errorf("Validate() = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}

func TestServeWithADoneContextReturnsNilAndClosesTheListener(t *testing.T) {
	ctx, d := newTestDriver(t)
	lis, err := net.Listen("unix", filepath.Join(t.TempDir(), "csi.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := d.Serve(ctx, lis); err != nil {
		t.Fatalf("Serve = %v, want nil", err)
	}
	if _, err := lis.Accept(); err == nil {
		t.Error("the listener still accepts connections after Serve returned")
	}
}
