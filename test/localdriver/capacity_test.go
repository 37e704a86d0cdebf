package localdriver

import (
	"context"
	"maps"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"k8s.io/klog/v2/ktesting"
)

const (
	zoneKey = "topology.local.csi.example.com/zone"
	nodeKey = "topology.local.csi.example.com/node"
)

// zoneA is the segment of a driver configured with a topology.
var zoneA = map[string]string{zoneKey: "a", nodeKey: "node-1"}

// newDriverWith returns a driver with a 100 MiB pool and the given
// topology, its state in a new temporary directory.
func newDriverWith(t *testing.T, topology map[string]string) (context.Context, *Driver) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	d, err := New(ctx, Config{StateDir: t.TempDir(), Name: DefaultName, NodeID: "node-1", CapacityBytes: 100 * mib, Topology: topology})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return ctx, d
}

func TestGetCapacity(t *testing.T) {
	multiNode := mountCapability()
	multiNode.AccessMode.Mode = csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
	tests := map[string]struct {
		topology map[string]string
		req      *csi.GetCapacityRequest
		want     int64
	}{
		"the pool less a 10 MiB volume and its 10 MiB snapshot": {
			req:  &csi.GetCapacityRequest{},
			want: 80 * mib,
		},
		"a driver without topology is reachable from any segment": {
			req:  &csi.GetCapacityRequest{AccessibleTopology: &csi.Topology{Segments: map[string]string{zoneKey: "b"}}},
			want: 80 * mib,
		},
		"the driver's own segment has the pool": {
			topology: zoneA,
			req:      &csi.GetCapacityRequest{AccessibleTopology: &csi.Topology{Segments: zoneA}},
			want:     80 * mib,
		},
		"a segment that contains the driver's has the pool": {
			topology: zoneA,
			req:      &csi.GetCapacityRequest{AccessibleTopology: &csi.Topology{Segments: map[string]string{zoneKey: "a"}}},
			want:     80 * mib,
		},
		"no segment means all of the storage": {
			topology: zoneA,
			req:      &csi.GetCapacityRequest{Parameters: map[string]string{"type": "any"}},
			want:     80 * mib,
		},
		"another segment has nothing": {
			topology: zoneA,
			req:      &csi.GetCapacityRequest{AccessibleTopology: &csi.Topology{Segments: map[string]string{zoneKey: "a", nodeKey: "node-2"}}},
		},
		"a segment with a key the driver does not have has nothing": {
			topology: zoneA,
			req:      &csi.GetCapacityRequest{AccessibleTopology: &csi.Topology{Segments: map[string]string{"rack": "1"}}},
		},
		"volumes the driver cannot provide do not fit": {
			req: &csi.GetCapacityRequest{VolumeCapabilities: []*csi.VolumeCapability{multiNode}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, d := newDriverWith(t, tc.topology)
			vol := mustCreateVolume(ctx, t, d, newCreateRequest("pvc-1", requiredBytes(10*mib)))
			mustSnapshot(ctx, t, d, "snap-1", vol.GetVolumeId())

			resp, err := d.GetCapacity(ctx, tc.req)
			if err != nil {
				t.Fatalf("GetCapacity: %v", err)
			}
			if resp.GetAvailableCapacity() != tc.want || resp.GetMaximumVolumeSize() != nil {
				t.Errorf("GetCapacity = %v, want %d bytes available and no maximum volume size", resp, tc.want)
			}
		})
	}
}

func TestGetCapacityIsNeverNegative(t *testing.T) {
	ctx, d := newDriverWith(t, nil)
	mustCreateVolume(ctx, t, d, newCreateRequest("pvc-1", requiredBytes(150*mib)))
	resp, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{})
	if err != nil || resp.GetAvailableCapacity() != 0 {
		t.Errorf("GetCapacity of an overcommitted pool = %v, %v; want 0", resp, err)
	}
}

func TestTopology(t *testing.T) {
	ctx, d := newDriverWith(t, zoneA)
	want := &csi.Topology{Segments: zoneA}

	info, err := d.NodeGetInfo(ctx, &csi.NodeGetInfoRequest{})
	if err != nil || !proto.Equal(info.GetAccessibleTopology(), want) {
		t.Errorf("NodeGetInfo = %v, %v; want topology %v", info, err, want)
	}
	caps, err := d.GetPluginCapabilities(ctx, &csi.GetPluginCapabilitiesRequest{})
	if err != nil || !hasPluginService(caps, csi.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS) {
		t.Errorf("GetPluginCapabilities = %v, %v; want VOLUME_ACCESSIBILITY_CONSTRAINTS", caps, err)
	}

	in := func(segments ...map[string]string) createOption {
		return func(r *csi.CreateVolumeRequest) {
			r.AccessibilityRequirements = &csi.TopologyRequirement{}
			for _, s := range segments {
				r.AccessibilityRequirements.Requisite = append(r.AccessibilityRequirements.Requisite, &csi.Topology{Segments: s})
			}
		}
	}
	vol := mustCreateVolume(ctx, t, d, newCreateRequest("pvc-1", in(map[string]string{zoneKey: "b"}, map[string]string{zoneKey: "a"})))
	if got := vol.GetAccessibleTopology(); len(got) != 1 || !proto.Equal(got[0], want) {
		t.Errorf("volume is accessible in %v, want only %v", got, want)
	}
	_, err = d.CreateVolume(ctx, newCreateRequest("pvc-2", in(map[string]string{zoneKey: "b"})))
	wantCode(t, err, codes.ResourceExhausted)
}

func TestNoTopologyByDefault(t *testing.T) {
	ctx, d := newTestDriver(t)
	caps, err := d.GetPluginCapabilities(ctx, &csi.GetPluginCapabilitiesRequest{})
	if err != nil || hasPluginService(caps, csi.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS) {
		t.Errorf("GetPluginCapabilities = %v, %v; want no VOLUME_ACCESSIBILITY_CONSTRAINTS", caps, err)
	}
	vol := mustCreateVolume(ctx, t, d, newCreateRequest("pvc-1"))
	if vol.GetAccessibleTopology() != nil {
		t.Errorf("volume is accessible in %v, want no topology", vol.GetAccessibleTopology())
	}
}

func hasPluginService(resp *csi.GetPluginCapabilitiesResponse, want csi.PluginCapability_Service_Type) bool {
	for _, c := range resp.GetCapabilities() {
		if c.GetService().GetType() == want {
			return true
		}
	}
	return false
}

func TestParseTopology(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    map[string]string
		wantErr bool
	}{
		"one label":                 {in: "zone=a", want: map[string]string{"zone": "a"}},
		"two labels":                {in: "zone=a,node=n1", want: map[string]string{"zone": "a", "node": "n1"}},
		"an empty value is a value": {in: "zone=", want: map[string]string{"zone": ""}},
		"a label without =":         {in: "zone", wantErr: true},
		"an empty key":              {in: "=a", wantErr: true},
		"a key twice":               {in: "zone=a,zone=b", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTopology(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseTopology(%q) error %v, want error: %v", tc.in, err, tc.wantErr)
			}
			if !tc.wantErr && !maps.Equal(got, tc.want) {
				t.Errorf("ParseTopology(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}
