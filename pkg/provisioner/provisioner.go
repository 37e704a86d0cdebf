// Package provisioner is the sidecar's domain layer: it turns a claim, its
// StorageClass and its data source into a CSI CreateVolume request and the
// PersistentVolume for the result, and deletes volumes. It implements the
// Provisioner interface of sig-storage-lib-external-provisioner, whose
// ProvisionController runs the claim and volume loops around it.
package provisioner

import (
	"context"
	"errors"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/kubernetes-csi/csi-lib-utils/protosanitizer"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"

	"github.com/xns-csi/csi-provisioner/pkg/claimsource"
	csiclient "github.com/xns-csi/csi-provisioner/pkg/csi"
	"github.com/xns-csi/csi-provisioner/pkg/datasource"
	"github.com/xns-csi/csi-provisioner/pkg/inflight"
	"github.com/xns-csi/csi-provisioner/pkg/metrics"
)

// Driver is the part of the CSI client the provisioner calls.
type Driver interface {
	CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error)
	DeleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) error
}

// Config holds the provisioner's dependencies.
type Config struct {
	// DriverName is the CSI driver's name, also the provisioner name.
	DriverName string
	// Capabilities are what the driver advertised at start-up.
	Capabilities csiclient.Capabilities
	// Driver is the CSI connection.
	Driver Driver
	// Client reads Secrets (never cached) for CreateVolume and DeleteVolume.
	Client kubernetes.Interface
	// Claims, Volumes, Nodes and CSINodes are informer listers.
	Claims   corelisters.PersistentVolumeClaimLister
	Volumes  corelisters.PersistentVolumeLister
	Nodes    corelisters.NodeLister
	CSINodes storagelisters.CSINodeLister
	// Classes finds the provisioner secret of PVs provisioned before the
	// deletion-secret annotations existed.
	Classes storagelisters.StorageClassLister
	// Snapshots reads VolumeSnapshots and contents from caches.
	Snapshots SnapshotReader
	// Policy decides whether a claim may use its source.
	Policy claimsource.Policy
	// Protector guards sources while they are in use.
	Protector SourceProtector
	// InFlight remembers the CreateVolume calls whose outcome is unknown.
	InFlight *inflight.Registry
	// Recorder emits events on claims.
	Recorder record.EventRecorder
	// Metrics counts provisioning by data source.
	Metrics *metrics.Metrics
	// Options are the flags that shape requests and volumes.
	Options Options
}

// Provisioner provisions and deletes volumes of one CSI driver.
type Provisioner struct {
	driverName string
	caps       csiclient.Capabilities
	driver     Driver
	client     kubernetes.Interface
	claims     corelisters.PersistentVolumeClaimLister
	volumes    corelisters.PersistentVolumeLister
	nodes      corelisters.NodeLister
	csiNodes   storagelisters.CSINodeLister
	classes    storagelisters.StorageClassLister
	snapshots  SnapshotReader
	policy     claimsource.Policy
	protector  SourceProtector
	inflight   *inflight.Registry
	recorder   record.EventRecorder
	metrics    *metrics.Metrics
	opts       Options
	notices    notices
}

var (
	_ controller.Provisioner      = &Provisioner{}
	_ controller.Qualifier        = &Provisioner{}
	_ controller.BlockProvisioner = &Provisioner{}
)

// New returns a Provisioner for the given dependencies.
func New(cfg Config) *Provisioner {
	return &Provisioner{
		driverName: cfg.DriverName, caps: cfg.Capabilities, driver: cfg.Driver, client: cfg.Client,
		claims: cfg.Claims, volumes: cfg.Volumes, nodes: cfg.Nodes, csiNodes: cfg.CSINodes, classes: cfg.Classes,
		snapshots: cfg.Snapshots, policy: cfg.Policy, protector: cfg.Protector, inflight: cfg.InFlight, recorder: cfg.Recorder,
		metrics: cfg.Metrics, opts: cfg.Options,
	}
}

// SupportsBlock reports that raw block volumes can be requested; whether the
// driver accepts them is its own decision in CreateVolume.
func (p *Provisioner) SupportsBlock(context.Context) bool { return true }

// Provision creates the volume for a claim and returns its PV.
//
// Every refusal before the driver is called returns ProvisioningNoChange: a
// CreateVolume that timed out earlier may still be running in the driver,
// and the controller must keep retrying it rather than forget the volume.
func (p *Provisioner) Provision(ctx context.Context, opts controller.ProvisionOptions) (*v1.PersistentVolume, controller.ProvisioningState, error) {
	claim, class := opts.PVC, opts.StorageClass
	logger := klog.FromContext(ctx).WithValues("pvc", klog.KObj(claim))
	src, err := datasource.Resolve(claim)
	if err != nil {
		p.metrics.Observe(class.Name, src, err)
		return nil, controller.ProvisioningNoChange, err
	}
	pv, state, err := p.provision(klog.NewContext(ctx, logger), opts)
	p.metrics.Observe(class.Name, src, err)
	if err != nil {
		logger.V(2).Info("Provisioning did not succeed", "source", src.String(), "state", state, "err", err)
	}
	return pv, state, err
}

// provision reads as the steps it takes: an attempt whose CreateVolume may
// have run is finished or undone; otherwise the source is decided from the
// caches, the request built, the attempt recorded, the source protected,
// and CreateVolume sent.
func (p *Provisioner) provision(ctx context.Context, opts controller.ProvisionOptions) (*v1.PersistentVolume, controller.ProvisioningState, error) {
	claim, class := opts.PVC, opts.StorageClass
	if attempt := p.inflight.Get(claim.UID); attempt != nil {
		return p.resume(ctx, opts, attempt)
	}
	src, content, err := p.contentSource(claim, class)
	if err != nil {
		return nil, controller.ProvisioningNoChange, err
	}
	topo, err := p.topologyRequirement(opts)
	if err != nil {
		return nil, controller.ProvisioningNoChange, err
	}
	refs, err := resolveSecrets(class.Parameters, opts.PVName, claim)
	if err != nil {
		return nil, controller.ProvisioningNoChange, err
	}
	secret, err := p.readSecret(ctx, refs.provisioner)
	if err != nil {
		return nil, controller.ProvisioningNoChange, err
	}
	req, err := buildRequest(requestInput{opts: p.opts, claim: claim, class: class, pvName: opts.PVName,
		multiWriter: p.caps.SingleNodeMultiWriter, contentSource: content, topology: topo, secrets: secret})
	if err != nil {
		return nil, controller.ProvisioningNoChange, err
	}
	attempt := &inflight.Attempt{Claim: claim.UID, Namespace: claim.Namespace, Name: claim.Name, Request: req}
	if content != nil {
		attempt.Source = src
	}
	// Recorded before the source is protected, so that from the moment the
	// finalizer is there, source protection counts this attempt as a use.
	p.inflight.Begin(attempt)
	if content != nil {
		if err := p.protector.Protect(ctx, src); err != nil {
			p.inflight.End(claim.UID)
			return nil, controller.ProvisioningNoChange, fmt.Errorf("protecting %s from deletion: %w", src, err)
		}
	}
	return p.create(ctx, opts, attempt, refs)
}

// resume finishes an attempt whose CreateVolume may have run: it sends the
// same request again, without checking the source again (KEP-3294: an
// attempt past its checks finishes). If the claim is gone, the volume is
// taken back by name and deleted.
func (p *Provisioner) resume(ctx context.Context, opts controller.ProvisionOptions, attempt *inflight.Attempt) (*v1.PersistentVolume, controller.ProvisioningState, error) {
	claim := opts.PVC
	klog.FromContext(ctx).V(2).Info("Sending CreateVolume again: its earlier outcome is unknown", "volume", attempt.Request.GetName())
	if current, err := p.claims.PersistentVolumeClaims(claim.Namespace).Get(claim.Name); err != nil || current.UID != claim.UID {
		return p.abandon(ctx, attempt)
	}
	refs, err := resolveSecrets(opts.StorageClass.Parameters, opts.PVName, claim)
	if err != nil {
		return nil, controller.ProvisioningInBackground, err
	}
	return p.create(ctx, opts, attempt, refs)
}

// create sends the attempt's CreateVolume and turns the answer into a PV.
// The attempt ends when the driver has answered for good.
func (p *Provisioner) create(ctx context.Context, opts controller.ProvisionOptions, attempt *inflight.Attempt, refs secretRefs) (pv *v1.PersistentVolume, state controller.ProvisioningState, err error) {
	defer func() {
		if state != controller.ProvisioningInBackground {
			p.inflight.End(attempt.Claim)
		}
	}()
	req := attempt.Request
	klog.FromContext(ctx).V(5).Info("CreateVolume", "request", protosanitizer.StripSecrets(req))
	resp, err := p.driver.CreateVolume(ctx, req)
	if err != nil {
		mayReschedule := p.caps.AccessibilityConstraints && opts.SelectedNodeName != ""
		return nil, createState(err, mayReschedule), fmt.Errorf("CreateVolume %s: %w", req.Name, err)
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
	return buildVolume(volumeInput{opts: p.opts, claim: opts.PVC, class: opts.StorageClass, pvName: opts.PVName, driverName: p.driverName,
		fsType: fsType(p.opts, opts.StorageClass), created: created, secrets: refs}), controller.ProvisioningFinished, nil
}

// abandon undoes an attempt whose claim was deleted while its CreateVolume
// outcome was unknown: the volume may exist, and nobody will ever use it.
// CSI deletes volumes by ID, which only CreateVolume returns, so the same
// request is sent again to learn it.
func (p *Provisioner) abandon(ctx context.Context, attempt *inflight.Attempt) (*v1.PersistentVolume, controller.ProvisioningState, error) {
	logger := klog.FromContext(ctx)
	req := attempt.Request
	resp, err := p.driver.CreateVolume(ctx, req)
	if err != nil {
		if csiclient.IsFinal(err) {
			// The driver says it has no such volume and will not make one.
			p.inflight.End(attempt.Claim)
			logger.Info("Claim deleted while its volume was being created; the driver created none", "volume", req.GetName(), "err", err)
			return nil, controller.ProvisioningFinished, &controller.IgnoredError{Reason: "claim deleted"}
		}
		return nil, controller.ProvisioningInBackground, fmt.Errorf("CreateVolume %s of deleted claim %s/%s, to delete it: %w",
			req.GetName(), attempt.Namespace, attempt.Name, err)
	}
	id := resp.GetVolume().GetVolumeId()
	if err := p.driver.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id, Secrets: req.GetSecrets()}); err != nil {
		return nil, controller.ProvisioningInBackground, fmt.Errorf("deleting volume %s of deleted claim %s/%s: %w",
			id, attempt.Namespace, attempt.Name, err)
	}
	p.inflight.End(attempt.Claim)
	logger.Info("Claim deleted while its volume was being created; the volume was deleted", "volume", req.GetName(), "volumeID", id)
	return nil, controller.ProvisioningFinished, &controller.IgnoredError{Reason: "claim deleted"}
}

// undoCreate deletes a volume the driver created wrongly (without the
// requested content, or too small), so the user never gets an empty or short
// volume in place of the one asked for; err says what was wrong.
func (p *Provisioner) undoCreate(ctx context.Context, created *csi.Volume, secret map[string]string, err error) (controller.ProvisioningState, error) {
	if derr := p.driver.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: created.GetVolumeId(), Secrets: secret}); derr != nil {
		// The volume exists and the next attempt will get it back by name:
		// keep trying rather than forget it.
		return controller.ProvisioningInBackground, fmt.Errorf("%w, but deleting it failed (will retry): %v", err, derr)
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
