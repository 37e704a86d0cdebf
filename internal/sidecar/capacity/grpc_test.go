package capacity

import (
	"context"
	"slices"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/xns-csi/csi-provisioner/test/csitest"
)

// grpcCapacity calls GetCapacity over a gRPC connection, as the sidecar's
// CSI client will.
type grpcCapacity struct{ controller csi.ControllerClient }

func (g grpcCapacity) GetCapacity(ctx context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	return g.controller.GetCapacity(ctx, req)
}

// TestGetCapacityOverGRPC publishes what a driver on a real unix socket
// answers, and checks what the driver was asked: the class's parameters
// and the segment as accessible topology, nothing else.
func TestGetCapacityOverGRPC(t *testing.T) {
	d := csitest.Start(t, csitest.WithCapabilities(csi.ControllerServiceCapability_RPC_GET_CAPACITY))
	d.SetGetCapacityHook(func(_ context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
		if req.GetAccessibleTopology().GetSegments()["layer0"] == "foo" {
			return &csi.GetCapacityResponse{AvailableCapacity: 5 << 30, MaximumVolumeSize: wrapperspb.Int64(1 << 30)}, nil
		}
		return &csi.GetCapacityResponse{AvailableCapacity: 2 << 30}, nil
	})
	conn, err := grpc.NewClient(d.Address(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	must(t, err)
	t.Cleanup(func() { _ = conn.Close() })

	params := map[string]string{"type": "fast", "csi.storage.k8s.io/fstype": "ext4"}
	h := start(t, setup{
		objects: objects(nodeWith("node1", layer0), nodeWith("node2", layer0other), classes(newClass("fast-sc", withParameters(params)))),
		config:  func(c *Config) { c.CSI = grpcCapacity{csi.NewControllerClient(conn)} },
	})
	h.expect("start", "create fast-sc {layer0=foo} 5Gi max=1Gi"+ownerSuffix, "create fast-sc {layer0=bar} 2Gi"+ownerSuffix)

	want := []*csi.GetCapacityRequest{
		{Parameters: params, AccessibleTopology: &csi.Topology{Segments: layer0other}},
		{Parameters: params, AccessibleTopology: &csi.Topology{Segments: layer0}},
	}
	got := d.GetCapacityRequests()
	slices.SortFunc(got, func(a, b *csi.GetCapacityRequest) int {
		return compareKeys(Key{Segment: NewSegment(a.GetAccessibleTopology().GetSegments()).ID()},
			Key{Segment: NewSegment(b.GetAccessibleTopology().GetSegments()).ID()})
	})
	if !slices.EqualFunc(got, want, func(a, b *csi.GetCapacityRequest) bool { return proto.Equal(a, b) }) {
		t.Errorf("the driver was asked\n  %v\nwant\n  %v", got, want)
	}
}
