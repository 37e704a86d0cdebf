package csitest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

const gib = int64(1) << 30

type createOption func(*csi.CreateVolumeRequest)

func newCreateRequest(name string, opts ...createOption) *csi.CreateVolumeRequest {
	req := &csi.CreateVolumeRequest{
		Name: name,
		VolumeCapabilities: []*csi.VolumeCapability{{
			AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
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

func limitBytes(n int64) createOption {
	return func(r *csi.CreateVolumeRequest) {
		if r.CapacityRange == nil {
			r.CapacityRange = &csi.CapacityRange{}
		}
		r.CapacityRange.LimitBytes = n
	}
}

func withParameters(p map[string]string) createOption {
	return func(r *csi.CreateVolumeRequest) { r.Parameters = p }
}

func withoutCapabilities() createOption {
	return func(r *csi.CreateVolumeRequest) { r.VolumeCapabilities = nil }
}

func fromSnapshot(id string) createOption {
	return func(r *csi.CreateVolumeRequest) { r.VolumeContentSource = snapshotSource(id) }
}

func fromVolume(id string) createOption {
	return func(r *csi.CreateVolumeRequest) {
		r.VolumeContentSource = &csi.VolumeContentSource{
			Type: &csi.VolumeContentSource_Volume{Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: id}},
		}
	}
}

func snapshotSource(id string) *csi.VolumeContentSource {
	return &csi.VolumeContentSource{
		Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: id}},
	}
}

func TestCreateVolume(t *testing.T) {
	tests := map[string]struct {
		opts     []Option
		before   []*csi.CreateVolumeRequest
		req      *csi.CreateVolumeRequest
		wantCode codes.Code
		want     *csi.Volume // VolumeId is not compared
	}{
		"empty volume gets the required capacity and the parameters as context": {
			req:  newCreateRequest("pvc-1", requiredBytes(gib), withParameters(map[string]string{"type": "fast"})),
			want: &csi.Volume{CapacityBytes: gib, VolumeContext: map[string]string{"type": "fast"}},
		},
		"volume from a snapshot echoes the source and is at least as large": {
			opts: []Option{WithSnapshot("snap-1", 2*gib)},
			req:  newCreateRequest("pvc-1", fromSnapshot("snap-1")),
			want: &csi.Volume{CapacityBytes: 2 * gib, ContentSource: snapshotSource("snap-1")},
		},
		"volume from a snapshot keeps a larger required capacity": {
			opts: []Option{WithSnapshot("snap-1", 2*gib)},
			req:  newCreateRequest("pvc-1", requiredBytes(3*gib), fromSnapshot("snap-1")),
			want: &csi.Volume{CapacityBytes: 3 * gib, ContentSource: snapshotSource("snap-1")},
		},
		"clone of an existing volume takes its size": {
			opts: []Option{WithVolume("vol-src", 4*gib)},
			req:  newCreateRequest("pvc-1", fromVolume("vol-src")),
			want: &csi.Volume{CapacityBytes: 4 * gib, ContentSource: newCreateRequest("", fromVolume("vol-src")).VolumeContentSource},
		},
		"new volumes carry the configured topology": {
			opts: []Option{WithTopology(map[string]string{"zone": "a"})},
			req:  newCreateRequest("pvc-1"),
			want: &csi.Volume{AccessibleTopology: []*csi.Topology{{Segments: map[string]string{"zone": "a"}}}},
		},
		"same name with a larger size conflicts with the existing volume": {
			before:   []*csi.CreateVolumeRequest{newCreateRequest("pvc-1", requiredBytes(gib))},
			req:      newCreateRequest("pvc-1", requiredBytes(2*gib)),
			wantCode: codes.AlreadyExists,
		},
		"same name with another source conflicts with the existing volume": {
			opts:     []Option{WithSnapshot("snap-1", gib)},
			before:   []*csi.CreateVolumeRequest{newCreateRequest("pvc-1")},
			req:      newCreateRequest("pvc-1", fromSnapshot("snap-1")),
			wantCode: codes.AlreadyExists,
		},
		"request without a name is invalid": {
			req:      newCreateRequest(""),
			wantCode: codes.InvalidArgument,
		},
		"request without capabilities is invalid": {
			req:      newCreateRequest("pvc-1", withoutCapabilities()),
			wantCode: codes.InvalidArgument,
		},
		"unknown snapshot is not found": {
			req:      newCreateRequest("pvc-1", fromSnapshot("missing")),
			wantCode: codes.NotFound,
		},
		"unknown source volume is not found": {
			req:      newCreateRequest("pvc-1", fromVolume("missing")),
			wantCode: codes.NotFound,
		},
		"required capacity below the snapshot size is out of range": {
			opts:     []Option{WithSnapshot("snap-1", 2*gib)},
			req:      newCreateRequest("pvc-1", requiredBytes(gib), fromSnapshot("snap-1")),
			wantCode: codes.OutOfRange,
		},
		"limit below the snapshot size is out of range": {
			opts:     []Option{WithSnapshot("snap-1", 2*gib)},
			req:      newCreateRequest("pvc-1", limitBytes(gib), fromSnapshot("snap-1")),
			wantCode: codes.OutOfRange,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d := Start(t, tc.opts...)
			for _, req := range tc.before {
				if _, err := d.CreateVolume(t.Context(), req); err != nil {
					t.Fatalf("CreateVolume before the test: %v", err)
				}
			}
			before := len(d.Volumes())

			resp, err := d.CreateVolume(t.Context(), tc.req)

			if got := status.Code(err); got != tc.wantCode {
				t.Fatalf("CreateVolume: code %v (%v), want %v", got, err, tc.wantCode)
			}
			if tc.wantCode != codes.OK {
				if n := len(d.Volumes()); n != before {
					t.Errorf("failed CreateVolume changed the number of volumes from %d to %d", before, n)
				}
				return
			}
			got := proto.CloneOf(resp.GetVolume())
			got.VolumeId = ""
			if !proto.Equal(got, tc.want) {
				t.Errorf("CreateVolume returned %v, want %v", got, tc.want)
			}
			if _, ok := d.Volumes()[resp.GetVolume().GetVolumeId()]; !ok {
				t.Errorf("returned volume %q is not live in the driver", resp.GetVolume().GetVolumeId())
			}
		})
	}
}

func TestCreateVolumeIsIdempotentByName(t *testing.T) {
	d := Start(t)
	first, err := d.CreateVolume(t.Context(), newCreateRequest("pvc-1", requiredBytes(gib)))
	if err != nil {
		t.Fatalf("first CreateVolume: %v", err)
	}
	second, err := d.CreateVolume(t.Context(), newCreateRequest("pvc-1", requiredBytes(gib)))
	if err != nil {
		t.Fatalf("second CreateVolume: %v", err)
	}
	if !proto.Equal(first, second) {
		t.Errorf("second CreateVolume returned %v, want the first volume %v", second, first)
	}
	if n := len(d.Volumes()); n != 1 {
		t.Errorf("driver has %d volumes, want 1", n)
	}
	if n := len(d.CreateVolumeRequests()); n != 2 {
		t.Errorf("driver recorded %d CreateVolume requests, want 2", n)
	}
}

func TestCreateVolumeHook(t *testing.T) {
	errInjected := status.Error(codes.ResourceExhausted, "injected")
	tests := map[string]struct {
		hook       CreateVolumeHook
		wantErr    error
		wantSource bool
	}{
		"handled error is returned and creates nothing": {
			hook: func(context.Context, *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error, bool) {
				return nil, errInjected, true
			},
			wantErr: errInjected,
		},
		"handled response is returned and its volume becomes live": {
			hook: func(context.Context, *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error, bool) {
				return &csi.CreateVolumeResponse{Volume: &csi.Volume{VolumeId: "hooked", CapacityBytes: gib}}, nil, true
			},
		},
		"unhandled call falls through to the driver": {
			hook: func(context.Context, *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error, bool) {
				return nil, errInjected, false
			},
			wantSource: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d := Start(t, WithSnapshot("snap-1", gib))
			d.SetCreateVolumeHook(tc.hook)

			resp, err := d.CreateVolume(t.Context(), newCreateRequest("pvc-1", fromSnapshot("snap-1")))

			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("CreateVolume error = %v, want %v", err, tc.wantErr)
			}
			if n := len(d.CreateVolumeRequests()); n != 1 {
				t.Errorf("driver recorded %d CreateVolume requests, want 1", n)
			}
			if err != nil {
				if n := len(d.Volumes()); n != 0 {
					t.Errorf("driver has %d volumes after an injected error, want 0", n)
				}
				return
			}
			if _, ok := d.Volumes()[resp.GetVolume().GetVolumeId()]; !ok {
				t.Errorf("returned volume %q is not live in the driver", resp.GetVolume().GetVolumeId())
			}
			if got := resp.GetVolume().GetContentSource() != nil; got != tc.wantSource {
				t.Errorf("response has a content source: %v, want %v", got, tc.wantSource)
			}
		})
	}
}

func TestDeleteVolume(t *testing.T) {
	tests := map[string]struct {
		opts     []Option
		id       string
		wantCode codes.Code
	}{
		"existing volume is removed":             {opts: []Option{WithVolume("vol-a", gib)}, id: "vol-a"},
		"unknown volume is deleted successfully": {id: "vol-unknown"},
		"request without an ID is invalid":       {id: "", wantCode: codes.InvalidArgument},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d := Start(t, tc.opts...)

			_, err := d.DeleteVolume(t.Context(), &csi.DeleteVolumeRequest{VolumeId: tc.id})

			if got := status.Code(err); got != tc.wantCode {
				t.Fatalf("DeleteVolume: code %v (%v), want %v", got, err, tc.wantCode)
			}
			if _, ok := d.Volumes()[tc.id]; ok {
				t.Errorf("volume %q still exists", tc.id)
			}
			if n := len(d.DeleteVolumeRequests()); n != 1 {
				t.Errorf("driver recorded %d DeleteVolume requests, want 1", n)
			}
		})
	}
}

func TestDeletedVolumeNameCanBeReused(t *testing.T) {
	d := Start(t)
	first, err := d.CreateVolume(t.Context(), newCreateRequest("pvc-1"))
	if err != nil {
		t.Fatalf("CreateVolume: %v", err)
	}
	if _, err := d.DeleteVolume(t.Context(), &csi.DeleteVolumeRequest{VolumeId: first.GetVolume().GetVolumeId()}); err != nil {
		t.Fatalf("DeleteVolume: %v", err)
	}
	second, err := d.CreateVolume(t.Context(), newCreateRequest("pvc-1"))
	if err != nil {
		t.Fatalf("CreateVolume again: %v", err)
	}
	if second.GetVolume().GetVolumeId() == first.GetVolume().GetVolumeId() {
		t.Errorf("re-created volume reuses the deleted ID %q", first.GetVolume().GetVolumeId())
	}
}

func TestConcurrentCreateVolumeWithOneNameCreatesOneVolume(t *testing.T) {
	d := Start(t)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if _, err := d.CreateVolume(t.Context(), newCreateRequest("pvc-1")); err != nil {
				t.Errorf("CreateVolume: %v", err)
			}
		})
	}
	wg.Wait()
	if n := len(d.Volumes()); n != 1 {
		t.Errorf("driver has %d volumes, want 1", n)
	}
}

func TestGetCapacity(t *testing.T) {
	req := &csi.GetCapacityRequest{
		Parameters:         map[string]string{"type": "fast"},
		AccessibleTopology: &csi.Topology{Segments: map[string]string{"zone": "a"}},
	}
	errInjected := status.Error(codes.Unavailable, "injected")
	tests := map[string]struct {
		hook     GetCapacityHook
		want     *csi.GetCapacityResponse
		wantCode codes.Code
	}{
		"without a hook the driver has no GetCapacity": {wantCode: codes.Unimplemented},
		"the hook's answer is returned": {
			hook: func(_ context.Context, got *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
				return &csi.GetCapacityResponse{AvailableCapacity: int64(len(got.GetAccessibleTopology().GetSegments())) * gib}, nil
			},
			want: &csi.GetCapacityResponse{AvailableCapacity: gib},
		},
		"the hook's error is returned": {
			hook: func(context.Context, *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
				return nil, errInjected
			},
			wantCode: codes.Unavailable,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d := Start(t)
			d.SetGetCapacityHook(tc.hook)

			resp, err := d.GetCapacity(t.Context(), req)

			if got := status.Code(err); got != tc.wantCode {
				t.Fatalf("GetCapacity: code %v (%v), want %v", got, err, tc.wantCode)
			}
			if tc.want != nil && !proto.Equal(resp, tc.want) {
				t.Errorf("GetCapacity = %v, want %v", resp, tc.want)
			}
			if got := d.GetCapacityRequests(); len(got) != 1 || !proto.Equal(got[0], req) {
				t.Errorf("driver recorded %v, want the one request %v", got, req)
			}
		})
	}
}
