package localdriver

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"k8s.io/klog/v2/ktesting"
)

func TestCapacityFor(t *testing.T) {
	tests := map[string]struct {
		required, limit, source int64
		want                    int64
		wantCode                codes.Code
	}{
		"a request without a size gets the default":                 {want: DefaultCapacityBytes},
		"a request gets exactly its required bytes":                 {required: 3 * mib, want: 3 * mib},
		"a request without a size gets a limit below the default":   {limit: mib / 2, want: mib / 2},
		"a request without a size gets the default below its limit": {limit: 8 * mib, want: DefaultCapacityBytes},
		"a restore without a size gets the source's size":           {source: 5 * mib, want: 5 * mib},
		"a restore of a small source still gets the default":        {source: 10, want: DefaultCapacityBytes},
		"a restore without a size is capped by its limit":           {source: 10, limit: 100, want: 100},
		"a restore as big as its source is fine":                    {source: 5 * mib, required: 5 * mib, want: 5 * mib},
		"a restore smaller than its source is out of range":         {source: 5 * mib, required: 4 * mib, wantCode: codes.OutOfRange},
		"a limit smaller than the source is out of range":           {source: 5 * mib, limit: 4 * mib, wantCode: codes.OutOfRange},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := capacityFor(&csi.CapacityRange{RequiredBytes: tc.required, LimitBytes: tc.limit}, tc.source)
			wantCode(t, err, tc.wantCode)
			if got != tc.want {
				t.Errorf("capacity = %d, want %d", got, tc.want)
			}
		})
	}
}

// volumeFixture is what each CreateVolume rule starts from: a 4 MiB
// volume named "src" and a snapshot of it.
type volumeFixture struct {
	volumeID, snapshotID string
}

func newVolumeFixture(ctx context.Context, t *testing.T, d *Driver) volumeFixture {
	t.Helper()
	vol := mustCreateVolume(ctx, t, d, newCreateRequest("src", requiredBytes(4*mib)))
	snap := mustSnapshot(ctx, t, d, "snap", vol.GetVolumeId())
	return volumeFixture{volumeID: vol.GetVolumeId(), snapshotID: snap.GetSnapshotId()}
}

func TestCreateVolumeRules(t *testing.T) {
	multiNode := mountCapability()
	multiNode.AccessMode.Mode = csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
	noAccessType := &csi.VolumeCapability{AccessMode: mountCapability().GetAccessMode()}
	block := &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: mountCapability().GetAccessMode(),
	}

	tests := map[string]struct {
		request      func(f volumeFixture) *csi.CreateVolumeRequest
		wantCode     codes.Code
		wantCapacity int64
		wantSource   func(f volumeFixture) *csi.VolumeContentSource
		wantExisting bool // the response is the fixture's volume
	}{
		"a request without a name is invalid": {
			request:  func(volumeFixture) *csi.CreateVolumeRequest { return newCreateRequest("") },
			wantCode: codes.InvalidArgument,
		},
		"a request without capabilities is invalid": {
			request:  func(volumeFixture) *csi.CreateVolumeRequest { return newCreateRequest("v", withCapabilities()) },
			wantCode: codes.InvalidArgument,
		},
		"a multi-node access mode is invalid": {
			request: func(volumeFixture) *csi.CreateVolumeRequest {
				return newCreateRequest("v", withCapabilities(multiNode))
			},
			wantCode: codes.InvalidArgument,
		},
		"a capability without an access type is invalid": {
			request: func(volumeFixture) *csi.CreateVolumeRequest {
				return newCreateRequest("v", withCapabilities(noAccessType))
			},
			wantCode: codes.InvalidArgument,
		},
		"required bytes above the limit are invalid": {
			request: func(volumeFixture) *csi.CreateVolumeRequest {
				return newCreateRequest("v", requiredBytes(2*mib), limitBytes(mib))
			},
			wantCode: codes.InvalidArgument,
		},
		"a volume without a size gets 1 MiB": {
			request:      func(volumeFixture) *csi.CreateVolumeRequest { return newCreateRequest("v") },
			wantCapacity: DefaultCapacityBytes,
		},
		"a block volume gets its required bytes": {
			request: func(volumeFixture) *csi.CreateVolumeRequest {
				return newCreateRequest("v", withCapabilities(block), requiredBytes(3*mib))
			},
			wantCapacity: 3 * mib,
		},
		"an unknown source snapshot is not found": {
			request: func(volumeFixture) *csi.CreateVolumeRequest {
				return newCreateRequest("v", fromSnapshot("snap-unknown"))
			},
			wantCode: codes.NotFound,
		},
		"a restore smaller than the snapshot is out of range": {
			request: func(f volumeFixture) *csi.CreateVolumeRequest {
				return newCreateRequest("v", fromSnapshot(f.snapshotID), requiredBytes(mib))
			},
			wantCode: codes.OutOfRange,
		},
		"a restore without a size gets the snapshot's size and echoes its source": {
			request: func(f volumeFixture) *csi.CreateVolumeRequest {
				return newCreateRequest("v", fromSnapshot(f.snapshotID))
			},
			wantCapacity: 4 * mib,
			wantSource: func(f volumeFixture) *csi.VolumeContentSource {
				return newCreateRequest("", fromSnapshot(f.snapshotID)).VolumeContentSource
			},
		},
		"an unknown source volume is not found": {
			request:  func(volumeFixture) *csi.CreateVolumeRequest { return newCreateRequest("v", fromVolume("vol-unknown")) },
			wantCode: codes.NotFound,
		},
		"a clone smaller than its source is out of range": {
			request: func(f volumeFixture) *csi.CreateVolumeRequest {
				return newCreateRequest("v", fromVolume(f.volumeID), requiredBytes(mib))
			},
			wantCode: codes.OutOfRange,
		},
		"a larger clone gets its required bytes and echoes its source": {
			request: func(f volumeFixture) *csi.CreateVolumeRequest {
				return newCreateRequest("v", fromVolume(f.volumeID), requiredBytes(8*mib))
			},
			wantCapacity: 8 * mib,
			wantSource: func(f volumeFixture) *csi.VolumeContentSource {
				return newCreateRequest("", fromVolume(f.volumeID)).VolumeContentSource
			},
		},
		"the same name with a compatible size returns the same volume": {
			request: func(volumeFixture) *csi.CreateVolumeRequest {
				return newCreateRequest("src", requiredBytes(2*mib), limitBytes(4*mib))
			},
			wantCapacity: 4 * mib,
			wantExisting: true,
		},
		"the same name with more required bytes already exists": {
			request:  func(volumeFixture) *csi.CreateVolumeRequest { return newCreateRequest("src", requiredBytes(8*mib)) },
			wantCode: codes.AlreadyExists,
		},
		"the same name with a lower limit already exists": {
			request:  func(volumeFixture) *csi.CreateVolumeRequest { return newCreateRequest("src", limitBytes(2*mib)) },
			wantCode: codes.AlreadyExists,
		},
		"the same name with a content source already exists": {
			request: func(f volumeFixture) *csi.CreateVolumeRequest {
				return newCreateRequest("src", fromSnapshot(f.snapshotID))
			},
			wantCode: codes.AlreadyExists,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, d := newTestDriver(t)
			f := newVolumeFixture(ctx, t, d)

			resp, err := d.CreateVolume(ctx, tc.request(f))
			wantCode(t, err, tc.wantCode)
			if err != nil {
				return
			}
			vol := resp.GetVolume()
			if vol.GetCapacityBytes() != tc.wantCapacity {
				t.Errorf("capacity = %d, want %d", vol.GetCapacityBytes(), tc.wantCapacity)
			}
			if got := vol.GetVolumeId() == f.volumeID; got != tc.wantExisting {
				t.Errorf("volume ID %q, fixture volume %q: same = %v, want %v", vol.GetVolumeId(), f.volumeID, got, tc.wantExisting)
			}
			var wantSource *csi.VolumeContentSource
			if tc.wantSource != nil {
				wantSource = tc.wantSource(f)
			}
			if !proto.Equal(vol.GetContentSource(), wantSource) {
				t.Errorf("content source = %v, want %v", vol.GetContentSource(), wantSource)
			}
			if _, err := os.Stat(d.VolumeDir(vol.GetVolumeId())); err != nil {
				t.Errorf("volume directory: %v", err)
			}
		})
	}
}

func TestRestoreHasSnapshotTimeContent(t *testing.T) {
	ctx, d := newTestDriver(t)
	src := mustCreateVolume(ctx, t, d, newCreateRequest("src"))
	srcDir := d.VolumeDir(src.GetVolumeId())
	writeFile(t, srcDir, "a.txt", "v1")
	writeFile(t, srcDir, "sub/b.txt", "v1")

	snap := mustSnapshot(ctx, t, d, "snap", src.GetVolumeId())
	writeFile(t, srcDir, "a.txt", "v2")
	writeFile(t, srcDir, "c.txt", "new")
	if err := os.Remove(srcDir + "/sub/b.txt"); err != nil {
		t.Fatal(err)
	}

	restored := mustCreateVolume(ctx, t, d, newCreateRequest("restored", fromSnapshot(snap.GetSnapshotId())))
	// Neither the snapshot nor its source is needed any more.
	for _, err := range []error{
		func() error {
			_, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: snap.GetSnapshotId()})
			return err
		}(),
		func() error {
			_, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: src.GetVolumeId()})
			return err
		}(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}

	dir := d.VolumeDir(restored.GetVolumeId())
	for file, want := range map[string]string{"a.txt": "v1", "sub/b.txt": "v1", "c.txt": "<missing>"} {
		if got := readFile(t, dir, file); got != want {
			t.Errorf("restored %s = %q, want %q", file, got, want)
		}
	}
}

func TestCloneCopiesSourceContent(t *testing.T) {
	ctx, d := newTestDriver(t)
	src := mustCreateVolume(ctx, t, d, newCreateRequest("src"))
	srcDir := d.VolumeDir(src.GetVolumeId())
	writeFile(t, srcDir, "data/file.txt", "original")

	clone := mustCreateVolume(ctx, t, d, newCreateRequest("clone", fromVolume(src.GetVolumeId())))
	cloneDir := d.VolumeDir(clone.GetVolumeId())
	writeFile(t, cloneDir, "data/file.txt", "changed in clone")

	if got := readFile(t, srcDir, "data/file.txt"); got != "original" {
		t.Errorf("source file = %q after changing the clone, want %q", got, "original")
	}
	if got := readFile(t, cloneDir, "data/file.txt"); got != "changed in clone" {
		t.Errorf("clone file = %q, want %q", got, "changed in clone")
	}
}

func TestDeleteVolume(t *testing.T) {
	ctx, d := newTestDriver(t)
	vol := mustCreateVolume(ctx, t, d, newCreateRequest("v"))
	writeFile(t, d.VolumeDir(vol.GetVolumeId()), "f", "x")

	for i := range 2 {
		if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: vol.GetVolumeId()}); err != nil {
			t.Fatalf("DeleteVolume #%d: %v", i+1, err)
		}
	}
	for _, path := range []string{d.VolumeDir(vol.GetVolumeId()), d.layout.volumeMeta(vol.GetVolumeId())} {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s still exists (%v)", path, err)
		}
	}
	if again := mustCreateVolume(ctx, t, d, newCreateRequest("v")); again.GetVolumeId() == vol.GetVolumeId() {
		t.Errorf("the name of a deleted volume returned the deleted volume %q", again.GetVolumeId())
	}

	_, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "../../etc"})
	wantCode(t, err, codes.OK)
	_, err = d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{})
	wantCode(t, err, codes.InvalidArgument)
}

func TestRestoreDelayGivesUpWithTheCaller(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	d, err := New(ctx, Config{StateDir: t.TempDir(), Name: DefaultName, NodeID: "node-1", RestoreDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	req := newCreateRequest("restore")
	req.VolumeContentSource = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
		Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: "s"}}}
	if _, err := d.CreateVolume(ctx, req); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("CreateVolume = %v, want DeadlineExceeded while the restore waits", err)
	}
}
