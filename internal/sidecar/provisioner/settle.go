package provisioner

import (
	"context"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"

	"github.com/xns-csi/csi-provisioner/internal/sidecar/inflight"
)

// Settle undoes the claim's parked attempt (a CreateVolume whose outcome is
// unknown) if its claim will never get the volume: see abandonReason. It
// does not depend on the controller library, which stops handing a claim
// to Provision as soon as the claim names a volume or another provisioner,
// or its StorageClass is gone, and so would leave the volume behind. An
// attempt whose claim still qualifies is left to Provision, which finishes
// it. It reports whether the attempt is settled (undone, or there is none
// left); otherwise the caller checks again later: a held attempt is being
// sent by Provision at the moment.
func (p *Provisioner) Settle(ctx context.Context, claim types.UID) (settled bool, err error) {
	attempt, busy := p.inflight.Take(claim)
	switch {
	case busy:
		return false, nil
	case attempt == nil:
		return true, nil
	}
	why := p.abandonReason(attempt)
	if why == "" {
		p.inflight.Leave(attempt.Claim)
		return false, nil
	}
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("pvc", klog.KRef(attempt.Namespace, attempt.Name)))
	_, state, err := p.abandon(ctx, attempt, why)
	if state == controller.ProvisioningInBackground {
		return false, err
	}
	return true, nil
}

// abandonReason says why the attempt's claim will never get the attempt's
// volume, "" if it may: the claim is gone or was re-created, names another
// volume (while an attempt is in progress no PV of this provisioner exists
// for the claim), or was handed to another provisioner. The claim is read
// from the cache; a claim the cache still shows is never abandoned for a
// deletion it has not seen.
func (p *Provisioner) abandonReason(attempt *inflight.Attempt) string {
	claim, err := p.claims.PersistentVolumeClaims(attempt.Namespace).Get(attempt.Name)
	switch {
	case err != nil || claim.UID != attempt.Claim:
		return "was deleted"
	case claim.Spec.VolumeName != "":
		return fmt.Sprintf("names volume %s", claim.Spec.VolumeName)
	case !p.isOurs(claim):
		return fmt.Sprintf("is handed to provisioner %q", provisionerOf(claim))
	}
	return ""
}

// notThisAttempts says why created, which CreateVolume returned for the
// attempt's request, may not be deleted, "" when it may: a volume with
// another content source or smaller than asked is another request's (a
// name shared by another claim, e.g. with a short
// --volume-name-uuid-length), and a volume a PV names belongs to that PV's
// claim. The attempt's own PV is read from the API server, as the cache
// may not show it yet: an earlier CreateVolume of the claim may have been
// answered and its PV saved, and the claim bound to it, before this one's
// answer was lost.
func (p *Provisioner) notThisAttempts(ctx context.Context, attempt *inflight.Attempt, created *csi.Volume) (string, error) {
	req := attempt.Request
	if !confirmsSource(req.GetVolumeContentSource(), created.GetContentSource()) {
		return "its data source is not the one requested", nil
	}
	if got, want := created.GetCapacityBytes(), req.GetCapacityRange().GetRequiredBytes(); got != 0 && got < want {
		return fmt.Sprintf("its %d bytes are less than the %d requested", got, want), nil
	}
	if owner := p.namedByVolume(ctx, created.GetVolumeId()); owner != "" || attempt.Volume == "" {
		return owner, nil
	}
	pv, err := p.client.CoreV1().PersistentVolumes().Get(ctx, attempt.Volume, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading PersistentVolume %s: %w", attempt.Volume, err)
	}
	if p.names(ctx, pv, created.GetVolumeId()) {
		return fmt.Sprintf("PersistentVolume %s names it", pv.Name), nil
	}
	return "", nil
}

// namedByVolume says which PV already names the driver's volume id (an
// in-tree PV in its CSI form), "" when none does or the PV cache cannot be
// read (as before any PV exists).
func (p *Provisioner) namedByVolume(ctx context.Context, id string) string {
	for _, pv := range p.saving.list() {
		if p.names(ctx, pv, id) {
			return fmt.Sprintf("PersistentVolume %s, being saved, names it", pv.Name)
		}
	}
	pvs, err := p.volumes.List(labels.Everything())
	if err != nil {
		return ""
	}
	for _, pv := range pvs {
		if p.names(ctx, pv, id) {
			return fmt.Sprintf("PersistentVolume %s already names it", pv.Name)
		}
	}
	return ""
}

// names reports whether pv (an in-tree PV in its CSI form) names the
// driver's volume id.
func (p *Provisioner) names(ctx context.Context, pv *v1.PersistentVolume, id string) bool {
	if pv.Spec.CSI == nil {
		var err error
		if pv, _, err = p.migration.volumeToCSI(ctx, pv); err != nil || pv.Spec.CSI == nil {
			return false
		}
	}
	return pv.Spec.CSI.Driver == p.driverName && pv.Spec.CSI.VolumeHandle == id
}
