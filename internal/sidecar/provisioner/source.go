package provisioner

import (
	"context"
	"errors"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/sourceprotection"
)

// SourceProtector puts the provisioner's finalizer on a snapshot or claim
// before it is used as a source, so it cannot be deleted meanwhile.
type SourceProtector interface {
	Protect(ctx context.Context, src datasource.Source) error
}

// ReasonSourceProtectionForbidden is the reason of the Warning event on a
// claim whose source could not be protected because the sidecar's RBAC
// allows neither patching nor updating it.
const ReasonSourceProtectionForbidden = "SourceProtectionForbidden"

// protect puts the protection finalizer on the claim's source. When the
// RBAC allows neither a patch nor an update of the source, the claim is
// told once with a Warning event and the volume is made without the
// protection, as upstream does: refusing would fail every restore and clone
// of a sidecar deployed with upstream's RBAC.
func (p *Provisioner) protect(ctx context.Context, claim *v1.PersistentVolumeClaim, src datasource.Source) error {
	err := p.protector.Protect(ctx, src)
	var forbidden *sourceprotection.ForbiddenError
	if errors.As(err, &forbidden) {
		p.noticeOnce(ctx, claim, v1.EventTypeWarning, ReasonSourceProtectionForbidden, fmt.Sprintf(
			"%s is not protected from deletion while the volume is made from it: %v; provisioning continues without the protection",
			src, forbidden))
		return nil
	}
	if err != nil {
		return fmt.Errorf("protecting %s from deletion: %w", src, err)
	}
	return nil
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

// contentSource decides whether the claim may be provisioned from its
// source now (claimsource) and returns the object the volume is made from
// (the snapshot or claim to protect: for a VolumeSnapshotLink, the
// snapshot it links to) and what to pass to CreateVolume, or a
// *RefusedError saying why not (yet). It reads caches only and changes
// nothing.
func (p *Provisioner) contentSource(claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass) (datasource.Source, *csi.VolumeContentSource, error) {
	_, verdict, err := p.policy.Decide(claim, class.Name)
	switch {
	case err != nil:
		return datasource.Source{}, nil, err
	case verdict.Action != claimsource.Provision:
		return datasource.Source{}, nil, &RefusedError{Reason: string(verdict.Reason), Message: verdict.Message}
	}
	return verdict.Uses, verdict.Content, nil
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
