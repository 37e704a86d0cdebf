package localdriver

import (
	"context"
	"maps"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
)

func withMutableParameters(params map[string]string) createOption {
	return func(r *csi.CreateVolumeRequest) { r.MutableParameters = params }
}

// wantRecorded fails the test unless the driver's metadata of the volume
// holds exactly the mutable parameters want.
func wantRecorded(t *testing.T, d *Driver, volumeID string, want map[string]string) {
	t.Helper()
	got, err := RecordedMutableParameters(d.VolumeDir(volumeID))
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Errorf("recorded mutable parameters = %v, want %v", got, want)
	}
}

func TestCheckMutableParameters(t *testing.T) {
	tests := map[string]struct {
		params   map[string]string
		wantCode codes.Code
	}{
		"no parameters are fine":                            {},
		"iops and throughput are fine":                      {params: map[string]string{"iops": "3000", "throughput": "125"}},
		"an unknown key is invalid":                         {params: map[string]string{"iops": "3000", "XXX_FakeKey": "x"}, wantCode: codes.InvalidArgument},
		"a value that is not a number is invalid":           {params: map[string]string{"iops": "fast"}, wantCode: codes.InvalidArgument},
		"a value of zero is invalid":                        {params: map[string]string{"throughput": "0"}, wantCode: codes.InvalidArgument},
		"an empty value is invalid":                         {params: map[string]string{"iops": ""}, wantCode: codes.InvalidArgument},
		"a value with a unit is invalid, as no key has one": {params: map[string]string{"throughput": "125Mi"}, wantCode: codes.InvalidArgument},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			wantCode(t, checkMutableParameters(tc.params), tc.wantCode)
		})
	}
}

func TestCreateVolumeRecordsMutableParameters(t *testing.T) {
	ctx, d := newTestDriver(t)
	gold := map[string]string{"iops": "3000"}
	vol := mustCreateVolume(ctx, t, d, newCreateRequest("v", withMutableParameters(gold)))
	wantRecorded(t, d, vol.GetVolumeId(), gold)

	again := mustCreateVolume(ctx, t, d, newCreateRequest("v", withMutableParameters(map[string]string{"iops": "3000"})))
	if again.GetVolumeId() != vol.GetVolumeId() {
		t.Errorf("the same request again got volume %q, want %q", again.GetVolumeId(), vol.GetVolumeId())
	}
	_, err := d.CreateVolume(ctx, newCreateRequest("v", withMutableParameters(map[string]string{"iops": "6000"})))
	wantCode(t, err, codes.AlreadyExists)
	_, err = d.CreateVolume(ctx, newCreateRequest("v"))
	wantCode(t, err, codes.AlreadyExists)

	_, err = d.CreateVolume(ctx, newCreateRequest("w", withMutableParameters(map[string]string{"XXX_FakeKey": "x"})))
	wantCode(t, err, codes.InvalidArgument)

	plain := mustCreateVolume(ctx, t, d, newCreateRequest("plain"))
	wantRecorded(t, d, plain.GetVolumeId(), nil)
}

func TestControllerModifyVolume(t *testing.T) {
	gold := map[string]string{"iops": "3000"}
	tests := map[string]struct {
		// created are the volume's parameters at creation.
		created  map[string]string
		request  func(volumeID string) *csi.ControllerModifyVolumeRequest
		wantCode codes.Code
		want     map[string]string
	}{
		"a request without a volume ID is invalid": {
			created: gold,
			request: func(string) *csi.ControllerModifyVolumeRequest {
				return modifyRequest("", map[string]string{"iops": "1"})
			},
			wantCode: codes.InvalidArgument,
			want:     gold,
		},
		"an unknown volume is not found": {
			created:  gold,
			request:  func(string) *csi.ControllerModifyVolumeRequest { return modifyRequest("vol-unknown", nil) },
			wantCode: codes.NotFound,
			want:     gold,
		},
		"an unknown key is invalid and changes nothing": {
			created: gold,
			request: func(id string) *csi.ControllerModifyVolumeRequest {
				return modifyRequest(id, map[string]string{"iops": "6000", "XXX_FakeKey": "x"})
			},
			wantCode: codes.InvalidArgument,
			want:     gold,
		},
		"a new value replaces the old one": {
			created: gold,
			request: func(id string) *csi.ControllerModifyVolumeRequest {
				return modifyRequest(id, map[string]string{"iops": "6000"})
			},
			want: map[string]string{"iops": "6000"},
		},
		"a key the request does not name keeps its value": {
			created: gold,
			request: func(id string) *csi.ControllerModifyVolumeRequest {
				return modifyRequest(id, map[string]string{"throughput": "250"})
			},
			want: map[string]string{"iops": "3000", "throughput": "250"},
		},
		"a volume created without parameters gets them": {
			request: func(id string) *csi.ControllerModifyVolumeRequest {
				return modifyRequest(id, gold)
			},
			want: gold,
		},
		"a request without parameters changes nothing": {
			created: gold,
			request: func(id string) *csi.ControllerModifyVolumeRequest { return modifyRequest(id, nil) },
			want:    gold,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, d := newTestDriver(t)
			vol := mustCreateVolume(ctx, t, d, newCreateRequest("v", withMutableParameters(tc.created)))

			_, err := d.ControllerModifyVolume(ctx, tc.request(vol.GetVolumeId()))
			wantCode(t, err, tc.wantCode)
			wantRecorded(t, d, vol.GetVolumeId(), tc.want)
		})
	}
}

// TestModifiedParametersSurviveRestart: the metadata file is the record, so
// a restarted driver knows the parameters as last modified.
func TestModifiedParametersSurviveRestart(t *testing.T) {
	ctx, d := newTestDriver(t)
	dir := d.layout.root
	vol := mustCreateVolume(ctx, t, d, newCreateRequest("v", withMutableParameters(map[string]string{"iops": "3000"})))
	mustModify(ctx, t, d, vol.GetVolumeId(), map[string]string{"iops": "6000"})

	restarted := openDriver(ctx, t, dir)
	_, err := restarted.CreateVolume(ctx, newCreateRequest("v", withMutableParameters(map[string]string{"iops": "6000"})))
	wantCode(t, err, codes.OK)
	mustModify(ctx, t, restarted, vol.GetVolumeId(), map[string]string{"throughput": "125"})
	wantRecorded(t, restarted, vol.GetVolumeId(), map[string]string{"iops": "6000", "throughput": "125"})
}

func modifyRequest(volumeID string, params map[string]string) *csi.ControllerModifyVolumeRequest {
	return &csi.ControllerModifyVolumeRequest{VolumeId: volumeID, MutableParameters: params}
}

func mustModify(ctx context.Context, t *testing.T, d *Driver, volumeID string, params map[string]string) {
	t.Helper()
	if _, err := d.ControllerModifyVolume(ctx, modifyRequest(volumeID, params)); err != nil {
		t.Fatalf("ControllerModifyVolume(%q): %v", volumeID, err)
	}
}
