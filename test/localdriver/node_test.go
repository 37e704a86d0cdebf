package localdriver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
)

func publishRequest(volumeID, target string) *csi.NodePublishVolumeRequest {
	return &csi.NodePublishVolumeRequest{VolumeId: volumeID, TargetPath: target, VolumeCapability: mountCapability()}
}

func TestNodePublishVolumeLinksTheTargetToTheVolume(t *testing.T) {
	tests := map[string]struct {
		prepare  func(t *testing.T, target string)
		wantCode codes.Code
	}{
		"a missing target path becomes a link": {
			prepare: func(*testing.T, string) {},
		},
		"an empty directory at the target path is replaced": {
			prepare: func(t *testing.T, target string) {
				if err := os.Mkdir(target, 0o750); err != nil {
					t.Fatal(err)
				}
			},
		},
		"an empty file at the target path is replaced": {
			prepare: func(t *testing.T, target string) { writeFile(t, filepath.Dir(target), filepath.Base(target), "") },
		},
		"a directory with content at the target path is refused": {
			prepare:  func(t *testing.T, target string) { writeFile(t, target, "keep", "x") },
			wantCode: codes.FailedPrecondition,
		},
		"a link to another directory at the target path is refused": {
			prepare: func(t *testing.T, target string) {
				if err := os.Symlink(t.TempDir(), target); err != nil {
					t.Fatal(err)
				}
			},
			wantCode: codes.FailedPrecondition,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, d := newTestDriver(t)
			vol := mustCreateVolume(ctx, t, d, newCreateRequest("v"))
			writeFile(t, d.VolumeDir(vol.GetVolumeId()), "hello.txt", "hello")
			target := filepath.Join(t.TempDir(), "target")
			tc.prepare(t, target)

			_, err := d.NodePublishVolume(ctx, publishRequest(vol.GetVolumeId(), target))
			wantCode(t, err, tc.wantCode)
			if err != nil {
				return
			}
			if got := readFile(t, target, "hello.txt"); got != "hello" {
				t.Errorf("hello.txt through the target path = %q, want %q", got, "hello")
			}
			// Publishing again is idempotent.
			_, err = d.NodePublishVolume(ctx, publishRequest(vol.GetVolumeId(), target))
			wantCode(t, err, codes.OK)
		})
	}
}

func TestNodePublishVolumeValidation(t *testing.T) {
	multiNode := mountCapability()
	multiNode.AccessMode.Mode = csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
	tests := map[string]struct {
		request  func(volumeID, target string) *csi.NodePublishVolumeRequest
		wantCode codes.Code
	}{
		"a request without a volume ID is invalid": {
			request:  func(_, target string) *csi.NodePublishVolumeRequest { return publishRequest("", target) },
			wantCode: codes.InvalidArgument,
		},
		"a request without a target path is invalid": {
			request:  func(id, _ string) *csi.NodePublishVolumeRequest { return publishRequest(id, "") },
			wantCode: codes.InvalidArgument,
		},
		"a request without a capability is invalid, even for an unknown volume": {
			request: func(_, target string) *csi.NodePublishVolumeRequest {
				return &csi.NodePublishVolumeRequest{VolumeId: "vol-unknown", TargetPath: target}
			},
			wantCode: codes.InvalidArgument,
		},
		"an unsupported access mode is invalid": {
			request: func(id, target string) *csi.NodePublishVolumeRequest {
				r := publishRequest(id, target)
				r.VolumeCapability = multiNode
				return r
			},
			wantCode: codes.InvalidArgument,
		},
		"an unknown volume is not found": {
			request:  func(_, target string) *csi.NodePublishVolumeRequest { return publishRequest("vol-unknown", target) },
			wantCode: codes.NotFound,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, d := newTestDriver(t)
			vol := mustCreateVolume(ctx, t, d, newCreateRequest("v"))
			_, err := d.NodePublishVolume(ctx, tc.request(vol.GetVolumeId(), filepath.Join(t.TempDir(), "target")))
			wantCode(t, err, tc.wantCode)
		})
	}
}

func TestNodeUnpublishVolume(t *testing.T) {
	ctx, d := newTestDriver(t)
	vol := mustCreateVolume(ctx, t, d, newCreateRequest("v"))
	other := mustCreateVolume(ctx, t, d, newCreateRequest("other"))
	writeFile(t, d.VolumeDir(vol.GetVolumeId()), "keep.txt", "data")
	target := filepath.Join(t.TempDir(), "target")
	if _, err := d.NodePublishVolume(ctx, publishRequest(vol.GetVolumeId(), target)); err != nil {
		t.Fatal(err)
	}
	unpublish := func(volumeID, target string) error {
		_, err := d.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: volumeID, TargetPath: target})
		return err
	}

	// Another volume is not published at the target: nothing to do.
	wantCode(t, unpublish(other.GetVolumeId(), target), codes.OK)
	if _, err := os.Lstat(target); err != nil {
		t.Fatalf("unpublishing another volume removed the link: %v", err)
	}
	for range 2 {
		wantCode(t, unpublish(vol.GetVolumeId(), target), codes.OK)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("target path still exists (%v)", err)
	}
	if got := readFile(t, d.VolumeDir(vol.GetVolumeId()), "keep.txt"); got != "data" {
		t.Errorf("unpublishing changed the volume's data: keep.txt = %q", got)
	}

	wantCode(t, unpublish("", target), codes.InvalidArgument)
	wantCode(t, unpublish(vol.GetVolumeId(), ""), codes.InvalidArgument)
	wantCode(t, unpublish("vol-unknown", target), codes.NotFound)
}

func TestNodeGetInfoReportsTheNodeID(t *testing.T) {
	ctx, d := newTestDriver(t)
	info, err := d.NodeGetInfo(ctx, &csi.NodeGetInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetNodeId() != "node-1" || info.GetAccessibleTopology() != nil {
		t.Errorf("NodeGetInfo = %v, want node-1 without topology", info)
	}
}
