package provisioner

import (
	"context"
	"errors"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"

	"github.com/xns-csi/csi-provisioner/internal/sidecar/classparams"
	csiclient "github.com/xns-csi/csi-provisioner/internal/sidecar/csi"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/inflight"
)

// resume finishes an attempt whose CreateVolume may have run: it sends the
// same request again, without checking the source again (KEP-3294: an
// attempt past its checks finishes). If the claim is gone, the volume is
// taken back by name and deleted.
func (p *Provisioner) resume(ctx context.Context, opts controller.ProvisionOptions, attempt *inflight.Attempt) (*v1.PersistentVolume, controller.ProvisioningState, error) {
	claim := opts.PVC
	klog.FromContext(ctx).V(2).Info("Sending CreateVolume again: its earlier outcome is unknown", "volume", attempt.Request.GetName())
	if why := p.abandonReason(attempt); why != "" {
		return p.abandon(ctx, attempt, why)
	}
	class, err := p.migration.classToCSI(ctx, opts.StorageClass)
	if err != nil {
		p.inflight.Park(attempt.Claim)
		return nil, controller.ProvisioningInBackground, err
	}
	refs, err := resolveSecrets(class.Parameters, opts.PVName, claim)
	if err != nil {
		p.inflight.Park(attempt.Claim)
		return nil, controller.ProvisioningInBackground, err
	}
	return p.create(ctx, opts, attempt, refs)
}

// create sends the attempt's CreateVolume and turns the answer into a PV,
// an in-tree PV for a claim of an in-tree class (opts has the class the
// claim names). The attempt ends when the driver has answered for good.
func (p *Provisioner) create(ctx context.Context, opts controller.ProvisionOptions, attempt *inflight.Attempt, refs classparams.SecretRefs) (pv *v1.PersistentVolume, state controller.ProvisioningState, err error) {
	defer func() {
		if state == controller.ProvisioningInBackground {
			p.inflight.Park(attempt.Claim)
		} else {
			p.inflight.End(attempt.Claim)
		}
	}()
	ctx = csiclient.WithMigrated(ctx, p.migration.inTreeClass(opts.StorageClass))
	req := attempt.Request
	resp, err := p.driver.CreateVolume(ctx, req) // the error names the call and the volume
	if err != nil {
		mayReschedule := p.caps.AccessibilityConstraints && opts.SelectedNodeName != ""
		return nil, createState(err, mayReschedule), err
	}
	created := resp.GetVolume()
	if !confirmsSource(req.GetVolumeContentSource(), created.GetContentSource()) {
		state, err := p.undoCreate(ctx, created, req.GetSecrets(),
			errors.New("the CSI driver created the volume without the requested data source; it was deleted again"))
		return nil, state, err
	}
	if got, want := created.GetCapacityBytes(), req.GetCapacityRange().GetRequiredBytes(); got != 0 && got < want {
		state, err := p.undoCreate(ctx, created, req.GetSecrets(),
			fmt.Errorf("the CSI driver created a volume of %d bytes, less than the %d requested; it was deleted again", got, want))
		return nil, state, err
	}
	attributesClass, _, _ := p.lookupAttributesClass(opts.PVC)
	pv = buildVolume(volumeInput{opts: p.opts, claim: opts.PVC, class: opts.StorageClass, pvName: opts.PVName, driverName: p.driverName,
		identity: p.identity, topology: p.caps.AccessibilityConstraints, fsType: requestedFSType(req), attributesClass: attributesClass,
		created: created, secrets: refs})
	if pv, err = p.migration.volumeToInTree(opts.StorageClass, pv); err != nil {
		// Upstream means to delete the volume here (its Delete is handed
		// the failed translation's nil PV and retries forever instead).
		state, err := p.undoCreate(ctx, created, req.GetSecrets(), fmt.Errorf("%w; the volume was deleted again", err))
		return nil, state, err
	}
	p.saving.add(opts.PVC.UID, pv)
	return pv, controller.ProvisioningFinished, nil
}

// abandon undoes an attempt whose claim will never get its volume (why
// says which: see abandonReason), while the CreateVolume outcome is
// unknown: the volume may exist, and nobody would ever use it. CSI deletes
// volumes by ID, which only CreateVolume returns, so the same request is
// sent again to learn it. The attempt is held by the caller; abandon parks
// or ends it.
func (p *Provisioner) abandon(ctx context.Context, attempt *inflight.Attempt, why string) (*v1.PersistentVolume, controller.ProvisioningState, error) {
	logger := klog.FromContext(ctx).WithValues("pvc", klog.KRef(attempt.Namespace, attempt.Name), "reason", why)
	req := attempt.Request
	resp, err := p.driver.CreateVolume(ctx, req)
	if err != nil {
		if csiclient.IsFinal(err) {
			// The driver says it has no such volume and will not make one.
			p.inflight.End(attempt.Claim)
			logger.Info("Abandoned a CreateVolume whose outcome was unknown; the driver created no volume", "volume", req.GetName(), "err", err)
			return nil, controller.ProvisioningFinished, &controller.IgnoredError{Reason: "claim " + why}
		}
		p.inflight.Park(attempt.Claim)
		return nil, controller.ProvisioningInBackground, fmt.Errorf("claim %s/%s %s; getting its volume back to delete it: %w",
			attempt.Namespace, attempt.Name, why, err)
	}
	created := resp.GetVolume()
	notOurs, err := p.notThisAttempts(ctx, attempt, created)
	if err != nil {
		p.inflight.Park(attempt.Claim)
		return nil, controller.ProvisioningInBackground, fmt.Errorf("claim %s/%s %s; checking that its volume is not in use: %w",
			attempt.Namespace, attempt.Name, why, err)
	}
	if notOurs != "" {
		// Deleting it could destroy another claim's data: keep it, say so.
		p.inflight.End(attempt.Claim)
		logger.Error(nil, "Abandoned a CreateVolume whose outcome was unknown; the volume the driver returned is not deleted: "+notOurs,
			"volume", req.GetName(), "volumeID", created.GetVolumeId())
		return nil, controller.ProvisioningFinished, &controller.IgnoredError{Reason: "claim " + why}
	}
	id := created.GetVolumeId()
	if err := p.driver.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id, Secrets: req.GetSecrets()}); err != nil {
		p.inflight.Park(attempt.Claim)
		return nil, controller.ProvisioningInBackground, fmt.Errorf("claim %s/%s %s; deleting its volume: %w",
			attempt.Namespace, attempt.Name, why, err)
	}
	p.inflight.End(attempt.Claim)
	logger.Info("Abandoned a CreateVolume whose outcome was unknown; the volume was deleted", "volume", req.GetName(), "volumeID", id)
	return nil, controller.ProvisioningFinished, &controller.IgnoredError{Reason: "claim " + why}
}

// undoCreate deletes a volume the driver created wrongly (without the
// requested content, or too small), so the user never gets an empty or short
// volume in place of the one asked for; err says what was wrong.
func (p *Provisioner) undoCreate(ctx context.Context, created *csi.Volume, secret map[string]string, err error) (controller.ProvisioningState, error) {
	if owner := p.namedByVolume(ctx, created.GetVolumeId()); owner != "" {
		// Not this claim's volume (a name shared with another claim's
		// request): deleting it would destroy that claim's data.
		return controller.ProvisioningFinished, fmt.Errorf("the CSI driver returned volume %s, which is not this claim's (%s); it was not deleted",
			created.GetVolumeId(), owner)
	}
	if derr := p.driver.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: created.GetVolumeId(), Secrets: secret}); derr != nil {
		// The volume exists and the next attempt will get it back by name:
		// keep trying rather than forget it.
		return controller.ProvisioningInBackground, fmt.Errorf("%w, but deleting it failed (will retry): %w", err, derr)
	}
	return controller.ProvisioningFinished, err
}

// createState maps a CreateVolume error to what the controller must do: a
// final error ends the attempt; anything else means the volume may still be
// created in the background and the same request must be retried. A
// late-bound volume of a topology-aware driver that ran out of resources on
// the selected node goes back to the scheduler (CSI: ResourceExhausted means
// the operation is not pending).
func createState(err error, mayReschedule bool) controller.ProvisioningState {
	if mayReschedule && status.Code(err) == codes.ResourceExhausted {
		return controller.ProvisioningReschedule
	}
	if csiclient.IsFinal(err) {
		return controller.ProvisioningFinished
	}
	return controller.ProvisioningInBackground
}
