package localdriver

import (
	"os"
	"slices"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2/ktesting"
)

func TestCreateSnapshotRules(t *testing.T) {
	tests := map[string]struct {
		request     func(volA, volB string) *csi.CreateSnapshotRequest
		wantCode    codes.Code
		wantExisted bool // the response is the snapshot "existing" of volume A
	}{
		"a request without a name is invalid": {
			request:  func(a, _ string) *csi.CreateSnapshotRequest { return &csi.CreateSnapshotRequest{SourceVolumeId: a} },
			wantCode: codes.InvalidArgument,
		},
		"a request without a source volume is invalid": {
			request:  func(string, string) *csi.CreateSnapshotRequest { return &csi.CreateSnapshotRequest{Name: "s"} },
			wantCode: codes.InvalidArgument,
		},
		"an unknown source volume is not found": {
			request: func(string, string) *csi.CreateSnapshotRequest {
				return &csi.CreateSnapshotRequest{Name: "s", SourceVolumeId: "vol-unknown"}
			},
			wantCode: codes.NotFound,
		},
		"the same name and source volume return the same snapshot": {
			request: func(a, _ string) *csi.CreateSnapshotRequest {
				return &csi.CreateSnapshotRequest{Name: "existing", SourceVolumeId: a}
			},
			wantExisted: true,
		},
		"the same name with another source volume already exists": {
			request: func(_, b string) *csi.CreateSnapshotRequest {
				return &csi.CreateSnapshotRequest{Name: "existing", SourceVolumeId: b}
			},
			wantCode: codes.AlreadyExists,
		},
		"a new name makes a new ready snapshot of the source's size": {
			request: func(a, _ string) *csi.CreateSnapshotRequest {
				return &csi.CreateSnapshotRequest{Name: "new", SourceVolumeId: a}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, d := newTestDriver(t)
			volA := mustCreateVolume(ctx, t, d, newCreateRequest("a", requiredBytes(3*mib))).GetVolumeId()
			volB := mustCreateVolume(ctx, t, d, newCreateRequest("b")).GetVolumeId()
			existing := mustSnapshot(ctx, t, d, "existing", volA)

			resp, err := d.CreateSnapshot(ctx, tc.request(volA, volB))
			wantCode(t, err, tc.wantCode)
			if err != nil {
				return
			}
			snap := resp.GetSnapshot()
			if got := snap.GetSnapshotId() == existing.GetSnapshotId(); got != tc.wantExisted {
				t.Errorf("snapshot %q, existing %q: same = %v, want %v", snap.GetSnapshotId(), existing.GetSnapshotId(), got, tc.wantExisted)
			}
			if snap.GetSourceVolumeId() != volA || snap.GetSizeBytes() != 3*mib || !snap.GetReadyToUse() || snap.GetCreationTime() == nil {
				t.Errorf("snapshot = %v, want a ready snapshot of %s with 3 MiB and a creation time", snap, volA)
			}
		})
	}
}

func TestDeleteSnapshot(t *testing.T) {
	ctx, d := newTestDriver(t)
	vol := mustCreateVolume(ctx, t, d, newCreateRequest("v"))
	snap := mustSnapshot(ctx, t, d, "s", vol.GetVolumeId())

	for i := range 2 {
		if _, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: snap.GetSnapshotId()}); err != nil {
			t.Fatalf("DeleteSnapshot #%d: %v", i+1, err)
		}
	}
	for _, path := range []string{d.SnapshotDir(snap.GetSnapshotId()), d.layout.snapshotMeta(snap.GetSnapshotId())} {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s still exists (%v)", path, err)
		}
	}
	_, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{})
	wantCode(t, err, codes.InvalidArgument)
}

func TestListSnapshots(t *testing.T) {
	ctx, d := newTestDriver(t)
	volA := mustCreateVolume(ctx, t, d, newCreateRequest("a")).GetVolumeId()
	volB := mustCreateVolume(ctx, t, d, newCreateRequest("b")).GetVolumeId()
	var all, ofA []string
	for i, vol := range []string{volA, volA, volB, volA, volB} {
		id := mustSnapshot(ctx, t, d, string(rune('p'+i)), vol).GetSnapshotId()
		all = append(all, id)
		if vol == volA {
			ofA = append(ofA, id)
		}
	}
	slices.Sort(all)
	slices.Sort(ofA)

	tests := map[string]struct {
		request  *csi.ListSnapshotsRequest
		want     []string
		wantNext string
		wantCode codes.Code
	}{
		"an empty request lists every snapshot in ID order": {request: &csi.ListSnapshotsRequest{}, want: all},
		"a snapshot ID lists that snapshot":                 {request: &csi.ListSnapshotsRequest{SnapshotId: all[2]}, want: all[2:3]},
		"an unknown snapshot ID lists nothing":              {request: &csi.ListSnapshotsRequest{SnapshotId: "none-exist-id"}},
		"a source volume lists its snapshots":               {request: &csi.ListSnapshotsRequest{SourceVolumeId: volA}, want: ofA},
		"an unknown source volume lists nothing":            {request: &csi.ListSnapshotsRequest{SourceVolumeId: "vol-unknown"}},
		"a snapshot ID of another source volume lists nothing": {
			request: &csi.ListSnapshotsRequest{SnapshotId: ofA[0], SourceVolumeId: volB},
		},
		"max entries gives the first page and a token": {
			request: &csi.ListSnapshotsRequest{MaxEntries: 2}, want: all[:2], wantNext: all[2],
		},
		"a token without max entries gives the rest": {
			request: &csi.ListSnapshotsRequest{StartingToken: all[2]}, want: all[2:],
		},
		"a token and max entries give a middle page": {
			request: &csi.ListSnapshotsRequest{StartingToken: all[1], MaxEntries: 2}, want: all[1:3], wantNext: all[3],
		},
		"a token that is not a snapshot ID is aborted": {
			request: &csi.ListSnapshotsRequest{StartingToken: "invalid-token"}, wantCode: codes.Aborted,
		},
		"negative max entries are invalid": {
			request: &csi.ListSnapshotsRequest{MaxEntries: -1}, wantCode: codes.InvalidArgument,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, err := d.ListSnapshots(ctx, tc.request)
			wantCode(t, err, tc.wantCode)
			var got []string
			for _, e := range resp.GetEntries() {
				got = append(got, e.GetSnapshot().GetSnapshotId())
			}
			if !slices.Equal(got, tc.want) || resp.GetNextToken() != tc.wantNext {
				t.Errorf("got %v next %q, want %v next %q", got, resp.GetNextToken(), tc.want, tc.wantNext)
			}
		})
	}
}

func TestPageSkipsNothingWhenTheTokenSnapshotIsDeleted(t *testing.T) {
	ids := []string{newSnapshotID(), newSnapshotID(), newSnapshotID(), newSnapshotID()}
	slices.Sort(ids)
	first, err := page(ids, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	// The snapshot the token names is deleted before the next call.
	rest := slices.Delete(slices.Clone(ids), 2, 3)
	second, err := page(rest, first.next, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rest[second.start:second.end], ids[3:]; !slices.Equal(got, want) {
		t.Errorf("second page = %v, want %v", got, want)
	}
}

func TestSnapshotBeingRestoredCannotBeDeleted(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	d, err := New(ctx, Config{StateDir: t.TempDir(), Name: DefaultName, NodeID: "node-1"})
	if err != nil {
		t.Fatal(err)
	}
	vol, err := d.CreateVolume(ctx, newCreateRequest("source"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap", SourceVolumeId: vol.GetVolume().GetVolumeId()})
	if err != nil {
		t.Fatal(err)
	}
	id := snap.GetSnapshot().GetSnapshotId()
	done := d.markRestoring(id)
	if _, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: id}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("DeleteSnapshot during a restore = %v, want FailedPrecondition", err)
	}
	done()
	if _, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: id}); err != nil {
		t.Fatalf("DeleteSnapshot after the restore = %v", err)
	}
}
