package localdriver

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
	"k8s.io/klog/v2"
)

// CreateSnapshot copies the source volume's directory into a new snapshot,
// which is ready to use as soon as the call returns; its size is the source
// volume's capacity. It is idempotent by name: a second request with the
// same name and source volume gets the same snapshot, one with another
// source volume gets AlreadyExists.
func (d *Driver) CreateSnapshot(ctx context.Context, req *csi.CreateSnapshotRequest) (*csi.CreateSnapshotResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "snapshot name is required")
	}
	if req.GetSourceVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "source volume ID is required")
	}

	d.mu.Lock()
	defer d.mu.Unlock()

	if id, ok := d.snapshotByName[req.GetName()]; ok {
		snap := d.snapshots[id]
		if snap.SourceVolumeID != req.GetSourceVolumeId() {
			return nil, status.Errorf(codes.AlreadyExists, "snapshot %q exists with source volume %q", req.GetName(), snap.SourceVolumeID)
		}
		return &csi.CreateSnapshotResponse{Snapshot: snap.csiSnapshot()}, nil
	}
	vol, ok := d.volumes[req.GetSourceVolumeId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "source volume %q does not exist", req.GetSourceVolumeId())
	}

	snap := &snapshotRecord{
		ID:             newSnapshotID(),
		Name:           req.GetName(),
		SourceVolumeID: vol.ID,
		SizeBytes:      vol.CapacityBytes,
		CreationTime:   time.Now().UTC(),
		ReadyToUse:     true,
	}
	if err := createObject(ctx, d.layout.snapshotDir(snap.ID), d.layout.volumeDir(vol.ID), d.layout.snapshotMeta(snap.ID), snap); err != nil {
		return nil, status.Errorf(codes.Internal, "create snapshot %q: %v", req.GetName(), err)
	}
	d.snapshots[snap.ID] = snap
	d.snapshotByName[snap.Name] = snap.ID
	klog.FromContext(ctx).Info("Created snapshot", "snapshotID", snap.ID, "name", snap.Name, "sourceVolumeID", vol.ID, "sizeBytes", snap.SizeBytes)
	return &csi.CreateSnapshotResponse{Snapshot: snap.csiSnapshot()}, nil
}

// DeleteSnapshot removes a snapshot and its data. Deleting a snapshot that
// does not exist succeeds. Volumes restored from it are copies and stay.
func (d *Driver) DeleteSnapshot(ctx context.Context, req *csi.DeleteSnapshotRequest) (*csi.DeleteSnapshotResponse, error) {
	if req.GetSnapshotId() == "" {
		return nil, status.Error(codes.InvalidArgument, "snapshot ID is required")
	}
	d.mu.Lock()
	defer d.mu.Unlock()

	snap, ok := d.snapshots[req.GetSnapshotId()]
	if !ok {
		return &csi.DeleteSnapshotResponse{}, nil
	}
	if n := d.restoring[snap.ID]; n > 0 {
		// CSI: "Snapshot in use" is FAILED_PRECONDITION; the caller retries.
		return nil, status.Errorf(codes.FailedPrecondition, "snapshot %q is being restored into %d volume(s)", snap.ID, n)
	}
	if err := removeObject(d.layout.snapshotMeta(snap.ID), d.layout.snapshotDir(snap.ID)); err != nil {
		return nil, status.Errorf(codes.Internal, "delete snapshot %q: %v", snap.ID, err)
	}
	delete(d.snapshots, snap.ID)
	delete(d.snapshotByName, snap.Name)
	klog.FromContext(ctx).Info("Deleted snapshot", "snapshotID", snap.ID, "name", snap.Name)
	return &csi.DeleteSnapshotResponse{}, nil
}

// ListSnapshots lists the snapshots in snapshot ID order, filtered by
// snapshot ID and source volume ID when the request names them. An unknown
// ID gives an empty list. Pagination follows the spec: next_token is the ID
// of the first snapshot of the next page, so deleting snapshots between
// pages skips or repeats nothing; a token that is not a snapshot ID is
// Aborted.
func (d *Driver) ListSnapshots(_ context.Context, req *csi.ListSnapshotsRequest) (*csi.ListSnapshotsResponse, error) {
	if req.GetMaxEntries() < 0 {
		return nil, status.Error(codes.InvalidArgument, "max_entries must not be negative")
	}
	d.mu.Lock()
	var matches []*snapshotRecord
	for _, s := range d.snapshots {
		if req.GetSnapshotId() != "" && s.ID != req.GetSnapshotId() {
			continue
		}
		if req.GetSourceVolumeId() != "" && s.SourceVolumeID != req.GetSourceVolumeId() {
			continue
		}
		matches = append(matches, s)
	}
	d.mu.Unlock()

	slices.SortFunc(matches, func(a, b *snapshotRecord) int { return strings.Compare(a.ID, b.ID) })
	ids := make([]string, len(matches))
	for i, s := range matches {
		ids[i] = s.ID
	}
	p, err := page(ids, req.GetStartingToken(), req.GetMaxEntries())
	if err != nil {
		return nil, err
	}
	resp := &csi.ListSnapshotsResponse{NextToken: p.next}
	for _, s := range matches[p.start:p.end] {
		resp.Entries = append(resp.Entries, &csi.ListSnapshotsResponse_Entry{Snapshot: s.csiSnapshot()})
	}
	return resp, nil
}

// listPage is one page of a sorted list: the entries [start, end), and the
// token for the page after (empty on the last page).
type listPage struct {
	start, end int
	next       string
}

// page picks the page of sortedIDs that starts at the first ID at or after
// token and holds at most maxEntries IDs (all of them if 0). A token that
// is not a snapshot ID is Aborted, as the spec asks for a token the plugin
// cannot use.
func page(sortedIDs []string, token string, maxEntries int32) (listPage, error) {
	var p listPage
	if token != "" {
		if !snapshotIDPattern.MatchString(token) {
			return listPage{}, status.Errorf(codes.Aborted, "starting token %q is not valid", token)
		}
		p.start, _ = slices.BinarySearch(sortedIDs, token)
	}
	p.end = len(sortedIDs)
	if maxEntries > 0 && p.end-p.start > int(maxEntries) {
		p.end = p.start + int(maxEntries)
		p.next = sortedIDs[p.end]
	}
	return p, nil
}

// csiSnapshot is the snapshot as CreateSnapshot and ListSnapshots report it.
func (s *snapshotRecord) csiSnapshot() *csi.Snapshot {
	return &csi.Snapshot{
		SnapshotId:     s.ID,
		SourceVolumeId: s.SourceVolumeID,
		SizeBytes:      s.SizeBytes,
		CreationTime:   timestamppb.New(s.CreationTime),
		ReadyToUse:     s.ReadyToUse,
	}
}
