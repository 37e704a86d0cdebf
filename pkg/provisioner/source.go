package provisioner

import (
	"context"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/xns-csi/csi-provisioner/pkg/clonesource"
	"github.com/xns-csi/csi-provisioner/pkg/datasource"
	"github.com/xns-csi/csi-provisioner/pkg/referencegrant"
	"github.com/xns-csi/csi-provisioner/pkg/snapshotsource"
)

// SnapshotReader reads VolumeSnapshots and VolumeSnapshotContents from
// informer caches. Absent objects are (nil, nil); an error means the cache
// cannot be read (API not served, no permission, not synced).
type SnapshotReader interface {
	GetSnapshot(namespace, name string) (*snapv1.VolumeSnapshot, error)
	GetContent(name string) (*snapv1.VolumeSnapshotContent, error)
}

// GrantChecker decides from a cache whether a ReferenceGrant allows a
// reference.
type GrantChecker interface {
	Check(ref referencegrant.Reference) referencegrant.Decision
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

// contentSource checks the claim's source and returns what to pass to
// CreateVolume, or a *RefusedError saying why not (yet).
func (p *Provisioner) contentSource(ctx context.Context, claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass, src datasource.Source) (*csi.VolumeContentSource, error) {
	if src.NeedsGrant() {
		if !p.crossNamespace {
			return nil, refused("CrossNamespaceSourceDisabled",
				"spec.dataSourceRef.namespace is set, but the provisioner's CrossNamespaceSourceProvisioning feature gate is off; the claim is not provisioned")
		}
		if src.Type() != datasource.Snapshot {
			return nil, refused("CrossNamespaceKindUnsupported",
				"%s: only VolumeSnapshots can be used across namespaces (KEP-3294); clone the claim within its namespace instead", src)
		}
		if d := p.grants.Check(referencegrant.ClaimReference(claim.Namespace, src.APIGroup, src.Kind, src.Namespace, src.Name)); !d.Allowed {
			return nil, refused(string(d.Reason), "%s", d.Message)
		}
	}
	switch src.Type() {
	case datasource.None:
		return nil, nil
	case datasource.Snapshot:
		return p.snapshotSource(ctx, claim, src)
	case datasource.Claim:
		return p.cloneSource(ctx, claim, class, src)
	default:
		return nil, refused("PopulatorSource", "%s is left to its volume populator", src)
	}
}

func (p *Provisioner) snapshotSource(ctx context.Context, claim *v1.PersistentVolumeClaim, src datasource.Source) (*csi.VolumeContentSource, error) {
	if !p.caps.SupportsSnapshotRestore() {
		return nil, refused("SnapshotRestoreUnsupported", "CSI driver %q cannot restore snapshots (no CREATE_DELETE_SNAPSHOT capability); remove the data source or use another StorageClass", p.driverName)
	}
	snap, err := p.snapshots.GetSnapshot(src.Namespace, src.Name)
	if err != nil {
		return nil, refused("SnapshotAPIUnavailable", "cannot read %s: %v", src, err)
	}
	in := snapshotsource.Input{
		Namespace: src.Namespace, Name: src.Name, Snapshot: snap, DriverName: p.driverName,
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
	if err := p.protector.Protect(ctx, src); err != nil {
		return nil, fmt.Errorf("protecting %s from deletion: %w", src, err)
	}
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
		Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: verdict.Handle}}}, nil
}

func (p *Provisioner) cloneSource(ctx context.Context, claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass, src datasource.Source) (*csi.VolumeContentSource, error) {
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
	if err := p.protector.Protect(ctx, src); err != nil {
		return nil, fmt.Errorf("protecting %s from deletion: %w", src, err)
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
