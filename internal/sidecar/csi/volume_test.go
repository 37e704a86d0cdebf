package csi

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/xns-csi/csi-provisioner/test/csitest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

const gib = int64(1) << 30

type createOption func(*csi.CreateVolumeRequest)

// newCreateRequest builds a valid CreateVolume request for one mounted
// single-writer volume.
func newCreateRequest(name string, opts ...createOption) *csi.CreateVolumeRequest {
	req := &csi.CreateVolumeRequest{
		Name: name,
		VolumeCapabilities: []*csi.VolumeCapability{{
			AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
		}},
	}
	for _, opt := range opts {
		opt(req)
	}
	return req
}

func requiredBytes(n int64) createOption {
	return func(r *csi.CreateVolumeRequest) { r.CapacityRange = &csi.CapacityRange{RequiredBytes: n} }
}

func fromSnapshot(id string) createOption {
	return func(r *csi.CreateVolumeRequest) {
		r.VolumeContentSource = &csi.VolumeContentSource{
			Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: id}},
		}
	}
}

func withSecrets(secrets map[string]string) createOption {
	return func(r *csi.CreateVolumeRequest) { r.Secrets = secrets }
}

func TestCreateVolumeSendsTheRequestAndReturnsTheVolume(t *testing.T) {
	ctx, client, driver := connectTo(t, testTimeout,
		csitest.WithSnapshot("snap-1", 2*gib),
		csitest.WithTopology(map[string]string{"zone": "a"}))
	req := newCreateRequest("pvc-1", requiredBytes(3*gib), fromSnapshot("snap-1"), withSecrets(map[string]string{"token": "s3cr3t"}))

	resp, err := client.CreateVolume(ctx, req)
	if err != nil {
		t.Fatalf("CreateVolume: %v", err)
	}

	sent := driver.CreateVolumeRequests()
	if len(sent) != 1 || !proto.Equal(sent[0], req) {
		t.Errorf("driver received %v, want exactly %v", sent, req)
	}
	want := &csi.Volume{
		VolumeId:           resp.GetVolume().GetVolumeId(),
		CapacityBytes:      3 * gib,
		ContentSource:      req.GetVolumeContentSource(),
		AccessibleTopology: []*csi.Topology{{Segments: map[string]string{"zone": "a"}}},
	}
	if !proto.Equal(resp.GetVolume(), want) {
		t.Errorf("CreateVolume returned %v, want %v", resp.GetVolume(), want)
	}
	if _, ok := driver.Volumes()[want.GetVolumeId()]; !ok {
		t.Errorf("driver has no volume %q after CreateVolume", want.GetVolumeId())
	}
}

func TestCreateVolumeKeepsTheDriversErrorCode(t *testing.T) {
	ctx, client, _ := connectTo(t, testTimeout)

	_, err := client.CreateVolume(ctx, newCreateRequest("pvc-1", fromSnapshot("missing")))
	if got := status.Code(err); got != codes.NotFound {
		t.Errorf("CreateVolume from a missing snapshot: code %v (%v), want NotFound", got, err)
	}
	if !IsFinal(err) {
		t.Errorf("IsFinal(%v) = false, want true", err)
	}
}

func TestCreateVolumeTimeoutIsNotFinal(t *testing.T) {
	ctx, client, driver := connectTo(t, 50*time.Millisecond)
	driver.SetCreateVolumeHook(func(ctx context.Context, _ *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error, bool) {
		<-ctx.Done() // The driver is still working when the client gives up.
		return nil, ctx.Err(), true
	})

	_, err := client.CreateVolume(ctx, newCreateRequest("pvc-1"))
	if got := status.Code(err); got != codes.DeadlineExceeded {
		t.Errorf("CreateVolume: code %v (%v), want DeadlineExceeded", got, err)
	}
	if IsFinal(err) {
		t.Errorf("IsFinal(%v) = true, want false: the volume may still be created", err)
	}
	if ctx.Err() != nil {
		t.Errorf("per-call timeout canceled the caller's context: %v", ctx.Err())
	}
}

func TestCreateVolumeNeverLogsSecrets(t *testing.T) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(5), ktesting.BufferLogs(true)))
	ctx := klog.NewContext(t.Context(), logger)
	driver := csitest.Start(t)
	client, err := Connect(ctx, Config{Address: driver.Address()})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer func() { _ = client.Close() }()

	if _, err := client.CreateVolume(ctx, newCreateRequest("pvc-1", withSecrets(map[string]string{"token": "s3cr3t"}))); err != nil {
		t.Fatalf("CreateVolume: %v", err)
	}

	logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	if !strings.Contains(logs, "CreateVolume") {
		t.Errorf("CreateVolume was not logged at V(5):\n%s", logs)
	}
	if strings.Contains(logs, "s3cr3t") {
		t.Errorf("logs contain the secret:\n%s", logs)
	}
}

func TestDeleteVolume(t *testing.T) {
	tests := map[string]struct {
		existing []string
		delete   string
	}{
		"existing volume is deleted":              {existing: []string{"vol-a"}, delete: "vol-a"},
		"unknown volume is deleted without error": {delete: "vol-unknown"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var opts []csitest.Option
			for _, id := range tc.existing {
				opts = append(opts, csitest.WithVolume(id, gib))
			}
			ctx, client, driver := connectTo(t, testTimeout, opts...)
			req := &csi.DeleteVolumeRequest{VolumeId: tc.delete, Secrets: map[string]string{"token": "s3cr3t"}}

			if err := client.DeleteVolume(ctx, req); err != nil {
				t.Fatalf("DeleteVolume: %v", err)
			}

			if sent := driver.DeleteVolumeRequests(); len(sent) != 1 || !proto.Equal(sent[0], req) {
				t.Errorf("driver received %v, want exactly %v", sent, req)
			}
			if _, ok := driver.Volumes()[tc.delete]; ok {
				t.Errorf("volume %q still exists after DeleteVolume", tc.delete)
			}
		})
	}
}
