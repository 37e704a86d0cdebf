package csi

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"k8s.io/klog/v2/ktesting"

	"github.com/xns-csi/csi-provisioner/test/csitest"
	"github.com/xns-csi/csi-provisioner/test/localdriver"
)

func TestGetCapacitySendsTheRequestAndReturnsTheAnswer(t *testing.T) {
	ctx, client, driver := connectTo(t, testTimeout)
	driver.SetGetCapacityHook(func(context.Context, *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
		return &csi.GetCapacityResponse{AvailableCapacity: 3 * gib}, nil
	})
	req := &csi.GetCapacityRequest{Parameters: map[string]string{"type": "ssd"},
		AccessibleTopology: &csi.Topology{Segments: map[string]string{"zone": "a"}}}

	resp, err := client.GetCapacity(ctx, req)
	if err != nil {
		t.Fatalf("GetCapacity: %v", err)
	}
	if resp.GetAvailableCapacity() != 3*gib {
		t.Errorf("available capacity = %d, want 3Gi", resp.GetAvailableCapacity())
	}
	if sent := driver.GetCapacityRequests(); len(sent) != 1 || !proto.Equal(sent[0], req) {
		t.Errorf("driver received %v, want exactly %v", sent, req)
	}
}

func TestGetCapacityKeepsTheDriversErrorCode(t *testing.T) {
	ctx, client, _ := connectTo(t, testTimeout) // no hook: GetCapacity is Unimplemented

	_, err := client.GetCapacity(ctx, &csi.GetCapacityRequest{})
	if got := status.Code(err); got != codes.Unimplemented {
		t.Errorf("GetCapacity of a driver without it: code %v (%v), want Unimplemented", got, err)
	}
}

func TestGetCapacityIsBoundedByTheTimeout(t *testing.T) {
	ctx, client, driver := connectTo(t, 50*time.Millisecond)
	driver.SetGetCapacityHook(func(ctx context.Context, _ *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})

	_, err := client.GetCapacity(ctx, &csi.GetCapacityRequest{})
	if got := status.Code(err); got != codes.DeadlineExceeded {
		t.Errorf("GetCapacity: code %v (%v), want DeadlineExceeded", got, err)
	}
	if ctx.Err() != nil {
		t.Errorf("per-call timeout canceled the caller's context: %v", ctx.Err())
	}
}

func TestNodeGetInfoReturnsTheNodeAndItsTopology(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	segment := map[string]string{"topology.local.csi.example.com/node": "node-1"}
	address := serveLocalDriver(ctx, t, localdriver.Config{StateDir: t.TempDir(), Name: localdriver.DefaultName,
		NodeID: "node-1", Topology: segment})
	client, err := Connect(ctx, Config{Address: address, Timeout: testTimeout})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = client.Close() })

	info, err := client.NodeGetInfo(ctx)
	if err != nil {
		t.Fatalf("NodeGetInfo: %v", err)
	}
	want := &csi.NodeGetInfoResponse{NodeId: "node-1", AccessibleTopology: &csi.Topology{Segments: segment}}
	if !proto.Equal(info, want) {
		t.Errorf("NodeGetInfo = %v, want %v", info, want)
	}
}

func TestNodeGetInfoOfADriverWithoutNodeServiceFails(t *testing.T) {
	ctx, client, _ := connectTo(t, testTimeout, csitest.WithName("controller-only.example.com"))

	_, err := client.NodeGetInfo(ctx)
	if got := status.Code(err); got != codes.Unimplemented {
		t.Errorf("NodeGetInfo: code %v (%v), want Unimplemented", got, err)
	}
}

// serveLocalDriver serves the local driver, which has a Node service, on a
// unix socket until the test ends, and returns its address.
func serveLocalDriver(ctx context.Context, t *testing.T, cfg localdriver.Config) string {
	t.Helper()
	driver, err := localdriver.New(ctx, cfg)
	if err != nil {
		t.Fatalf("localdriver.New: %v", err)
	}
	path := filepath.Join(t.TempDir(), "csi.sock")
	lis, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("listen on %s: %v", path, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = driver.Serve(ctx, lis)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return "unix://" + path
}
