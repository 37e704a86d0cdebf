package provisioner

import (
	"context"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/xns-csi/csi-provisioner/pkg/claimsource"
	"github.com/xns-csi/csi-provisioner/pkg/clonesource"
	"github.com/xns-csi/csi-provisioner/pkg/datasource"
	"github.com/xns-csi/csi-provisioner/pkg/snapshotsource"
)

// SnapshotReader reads VolumeSnapshots and VolumeSnapshotContents from
// informer caches. Absent objects are (nil, nil); an error means the cache
// cannot be read (API not served, no permission, not synced).
type SnapshotReader interface {
	GetSnapshot(namespace, name string) (*snapv1.VolumeSnapshot, error)
	GetContent(name string) (*snapv1.VolumeSnapshotContent, error)
}

// SourceProtector puts the provisioner's finalizer on a snapshot or claim
// before it is used as a source, so it cannot be deleted meanwhile.
type SourceProtector interface {
	Protect(ctx context.Context, src datasource.Source) error
}

// RefusedError is returned when a claim cannot be provisioned from its
// source yet. Its message is shown to the user as the PVC event.
type RefusedError struct {
	// Reason is a short CamelCase cause, for logs and tests.
	Reason string
	// Message tells the claim's owner what is missing.
	Message string
}

func (e *RefusedError) Error() string { return e.Message }

func refused(reason, format string, args ...any) *RefusedError {
	return &RefusedError{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// contentSource decides whether the claim may be provisioned from its
// source now and returns what to pass to CreateVolume, or a *RefusedError
// saying why not (yet). It reads caches only and changes nothing.
func (p *Provisioner) contentSource(claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass) (datasource.Source, *csi.VolumeContentSource, error) {
	src, verdict, err := p.policy.Decide(claim)
	switch {
	case err != nil:
		return src, nil, err
	case verdict.Action != claimsource.Provision:
		return src, nil, refused(verdict.Reason, "%s", verdict.Message)
	}
	var content *csi.VolumeContentSource
	switch src.Type() {
	case datasource.Snapshot:
		content, err = p.snapshotSource(claim, src)
	case datasource.Claim:
		content, err = p.cloneSource(claim, class, src)
	}
	return src, content, err
}

func (p *Provisioner) snapshotSource(claim *v1.PersistentVolumeClaim, src datasource.Source) (*csi.VolumeContentSource, error) {
	if !p.caps.SupportsSnapshotRestore() {
		return nil, refused("SnapshotRestoreUnsupported", "CSI driver %q cannot restore snapshots (no CREATE_DELETE_SNAPSHOT capability); remove the data source or use another StorageClass", p.driverName)
	}
	snap, err := p.snapshots.GetSnapshot(src.Namespace, src.Name)
	if err != nil {
		return nil, refused("SnapshotAPIUnavailable", "cannot read %s: %v", src, err)
	}
	in := snapshotsource.Input{
		Namespace: src.Namespace, Name: src.Name, Snapshot: snap, Claim: claim, DriverName: p.driverName,
		RequestedBytes: requestedBytes(claim), VolumeMode: claim.Spec.VolumeMode,
		PreventVolumeModeConversion: p.opts.PreventVolumeModeConversion,
	}
	if snap != nil && snap.Status != nil && snap.Status.BoundVolumeSnapshotContentName != nil {
		if in.Content, err = p.snapshots.GetContent(*snap.Status.BoundVolumeSnapshotContentName); err != nil {
			return nil, refused("SnapshotAPIUnavailable", "cannot read the content of %s: %v", src, err)
		}
	}
	verdict := snapshotsource.Check(in)
	if !verdict.Usable() {
		return nil, refused(string(verdict.Reason), "%s", verdict.Message)
	}
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
		Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: verdict.Handle}}}, nil
}

func (p *Provisioner) cloneSource(claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass, src datasource.Source) (*csi.VolumeContentSource, error) {
	if !p.caps.SupportsClone() {
		return nil, refused("CloneUnsupported", "CSI driver %q cannot clone volumes (no CLONE_VOLUME capability); remove the data source or use another StorageClass", p.driverName)
	}
	in := clonesource.Input{Namespace: src.Namespace, Name: src.Name, Claim: claim, ClassName: class.Name,
		DriverName: p.driverName, RequestedBytes: requestedBytes(claim)}
	var err error
	if in.Source, err = p.claims.PersistentVolumeClaims(src.Namespace).Get(src.Name); err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	if in.Source != nil && in.Source.Spec.VolumeName != "" {
		if in.Volume, err = p.volumes.Get(in.Source.Spec.VolumeName); err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	verdict := clonesource.Check(in)
	if !verdict.Usable() {
		return nil, refused(string(verdict.Reason), "%s", verdict.Message)
	}
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{
		Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: verdict.Handle}}}, nil
}

// confirmsSource reports whether the driver's response says the volume was
// filled from the requested source. A driver that ignores the source would
// hand the user an empty volume instead of their data.
func confirmsSource(requested, got *csi.VolumeContentSource) bool {
	if requested == nil {
		return true
	}
	switch want := requested.GetType().(type) {
	case *csi.VolumeContentSource_Snapshot:
		return got.GetSnapshot().GetSnapshotId() == want.Snapshot.GetSnapshotId()
	case *csi.VolumeContentSource_Volume:
		return got.GetVolume().GetVolumeId() == want.Volume.GetVolumeId()
	}
	return false
}
