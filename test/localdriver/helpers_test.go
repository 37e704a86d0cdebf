package localdriver

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2/ktesting"
)

const mib = int64(1) << 20

// newTestDriver returns a driver with its state in a new temporary
// directory, and a context that logs to the test.
func newTestDriver(t *testing.T) (context.Context, *Driver) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	return ctx, openDriver(ctx, t, t.TempDir())
}

// openDriver starts a driver on an existing state directory, as a restart
// does.
func openDriver(ctx context.Context, t *testing.T, stateDir string) *Driver {
	t.Helper()
	d, err := New(ctx, Config{StateDir: stateDir, Name: DefaultName, NodeID: "node-1"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return d
}

type createOption func(*csi.CreateVolumeRequest)

// newCreateRequest builds a CreateVolume request for a mount volume that a
// single node writes.
func newCreateRequest(name string, opts ...createOption) *csi.CreateVolumeRequest {
	req := &csi.CreateVolumeRequest{
		Name:               name,
		VolumeCapabilities: []*csi.VolumeCapability{mountCapability()},
	}
	for _, opt := range opts {
		opt(req)
	}
	return req
}

func mountCapability() *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

func requiredBytes(n int64) createOption {
	return func(r *csi.CreateVolumeRequest) {
		if r.CapacityRange == nil {
			r.CapacityRange = &csi.CapacityRange{}
		}
		r.CapacityRange.RequiredBytes = n
	}
}

func limitBytes(n int64) createOption {
	return func(r *csi.CreateVolumeRequest) {
		if r.CapacityRange == nil {
			r.CapacityRange = &csi.CapacityRange{}
		}
		r.CapacityRange.LimitBytes = n
	}
}

func fromSnapshot(id string) createOption {
	return func(r *csi.CreateVolumeRequest) {
		r.VolumeContentSource = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
			Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: id},
		}}
	}
}

func fromVolume(id string) createOption {
	return func(r *csi.CreateVolumeRequest) {
		r.VolumeContentSource = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{
			Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: id},
		}}
	}
}

func withCapabilities(caps ...*csi.VolumeCapability) createOption {
	return func(r *csi.CreateVolumeRequest) { r.VolumeCapabilities = caps }
}

// mustCreateVolume creates a volume and fails the test if that fails.
func mustCreateVolume(ctx context.Context, t *testing.T, d *Driver, req *csi.CreateVolumeRequest) *csi.Volume {
	t.Helper()
	resp, err := d.CreateVolume(ctx, req)
	if err != nil {
		t.Fatalf("CreateVolume(%q): %v", req.GetName(), err)
	}
	return resp.GetVolume()
}

// mustSnapshot snapshots a volume and fails the test if that fails.
func mustSnapshot(ctx context.Context, t *testing.T, d *Driver, name, volumeID string) *csi.Snapshot {
	t.Helper()
	resp, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: name, SourceVolumeId: volumeID})
	if err != nil {
		t.Fatalf("CreateSnapshot(%q): %v", name, err)
	}
	return resp.GetSnapshot()
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readFile returns the file's content, or "<missing>" if it does not exist.
func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if os.IsNotExist(err) {
		return "<missing>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// wantCode fails the test unless err carries the gRPC code want (OK for
// nil).
func wantCode(t *testing.T, err error, want codes.Code) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Fatalf("got code %v (%v), want %v", got, err, want)
	}
}
