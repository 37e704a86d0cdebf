package localdriver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"k8s.io/klog/v2/ktesting"
)

func TestRestartKeepsVolumesSnapshotsAndIdempotency(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	stateDir := t.TempDir()
	before := openDriver(ctx, t, stateDir)
	vol := mustCreateVolume(ctx, t, before, newCreateRequest("v", requiredBytes(2*mib)))
	writeFile(t, before.VolumeDir(vol.GetVolumeId()), "f.txt", "snapshot time")
	snap := mustSnapshot(ctx, t, before, "s", vol.GetVolumeId())
	restored := mustCreateVolume(ctx, t, before, newCreateRequest("r", fromSnapshot(snap.GetSnapshotId())))

	after := openDriver(ctx, t, stateDir)

	if again := mustCreateVolume(ctx, t, after, newCreateRequest("v", requiredBytes(2*mib))); again.GetVolumeId() != vol.GetVolumeId() {
		t.Errorf("CreateVolume after restart = %q, want the existing %q", again.GetVolumeId(), vol.GetVolumeId())
	}
	_, err := after.CreateVolume(ctx, newCreateRequest("v", requiredBytes(4*mib)))
	wantCode(t, err, codes.AlreadyExists)
	if again := mustCreateVolume(ctx, t, after, newCreateRequest("r", fromSnapshot(snap.GetSnapshotId()))); again.GetVolumeId() != restored.GetVolumeId() {
		t.Errorf("restore after restart = %q, want the existing %q", again.GetVolumeId(), restored.GetVolumeId())
	}
	if again := mustSnapshot(ctx, t, after, "s", vol.GetVolumeId()); again.GetSnapshotId() != snap.GetSnapshotId() || !again.GetCreationTime().AsTime().Equal(snap.GetCreationTime().AsTime()) {
		t.Errorf("CreateSnapshot after restart = %v, want the existing %v", again, snap)
	}
	list, err := after.ListSnapshots(ctx, &csi.ListSnapshotsRequest{SourceVolumeId: vol.GetVolumeId()})
	if err != nil || len(list.GetEntries()) != 1 {
		t.Errorf("ListSnapshots after restart = %v, %v; want the one snapshot", list, err)
	}
	if got := readFile(t, after.VolumeDir(restored.GetVolumeId()), "f.txt"); got != "snapshot time" {
		t.Errorf("restored f.txt after restart = %q", got)
	}
}

func TestStartRemovesLeftoversOfInterruptedCalls(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	stateDir := t.TempDir()
	d := openDriver(ctx, t, stateDir)
	vol := mustCreateVolume(ctx, t, d, newCreateRequest("v"))

	// A CreateVolume that copied data but never wrote metadata, and a
	// metadata write that never got renamed into place.
	orphan := d.layout.volumeDir(newVolumeID())
	writeFile(t, orphan, "partial", "x")
	temp := tempPath(d.layout.snapshotMeta(newSnapshotID()))
	writeFile(t, filepath.Dir(temp), filepath.Base(temp), "{")
	// Metadata whose data someone removed is not served, but kept.
	lost := mustCreateVolume(ctx, t, d, newCreateRequest("lost"))
	if err := os.RemoveAll(d.VolumeDir(lost.GetVolumeId())); err != nil {
		t.Fatal(err)
	}

	d = openDriver(ctx, t, stateDir)

	for _, path := range []string{orphan, temp} {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("leftover %s still exists (%v)", path, err)
		}
	}
	if _, err := os.Stat(d.layout.volumeMeta(lost.GetVolumeId())); err != nil {
		t.Errorf("metadata without data was removed: %v", err)
	}
	_, err := d.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{
		VolumeId: lost.GetVolumeId(), VolumeCapabilities: []*csi.VolumeCapability{mountCapability()},
	})
	wantCode(t, err, codes.NotFound)
	_, err = d.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{
		VolumeId: vol.GetVolumeId(), VolumeCapabilities: []*csi.VolumeCapability{mountCapability()},
	})
	wantCode(t, err, codes.OK)
}

func TestNewRefusesMetadataOfAnotherObject(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	stateDir := t.TempDir()
	d := openDriver(ctx, t, stateDir)
	vol := mustCreateVolume(ctx, t, d, newCreateRequest("v"))
	otherID := newVolumeID()
	if err := os.Rename(d.layout.volumeMeta(vol.GetVolumeId()), d.layout.volumeMeta(otherID)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(d.VolumeDir(vol.GetVolumeId()), d.VolumeDir(otherID)); err != nil {
		t.Fatal(err)
	}
	if _, err := New(ctx, Config{StateDir: stateDir, Name: DefaultName, NodeID: "n"}); err == nil {
		t.Error("New accepted metadata whose ID does not match its file name")
	}
}

func TestReadStoredVolumesSeesWhatTheDriverCreated(t *testing.T) {
	ctx, d := newTestDriver(t)
	src, err := d.CreateVolume(ctx, newCreateRequest("src"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.CreateVolume(ctx, newCreateRequest("clone", fromVolume(src.GetVolume().GetVolumeId()))); err != nil {
		t.Fatal(err)
	}
	vols, err := ReadStoredVolumes(d.layout.root)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]StoredVolume{}
	for _, v := range vols {
		byName[v.Name] = v
	}
	if len(vols) != 2 || byName["clone"].SourceVolumeID != src.GetVolume().GetVolumeId() || byName["src"].DataDir != d.VolumeDir(src.GetVolume().GetVolumeId()) {
		t.Errorf("ReadStoredVolumes = %+v, want src and its clone", vols)
	}
}
