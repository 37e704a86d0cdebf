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
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/record"
	csitranslation "k8s.io/csi-translation-lib"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	csiclient "github.com/xns-csi/csi-provisioner/internal/sidecar/csi"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/inflight"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/metrics"
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
	// Identity is this process's provisioner identity (see Identity), put
	// into every PV's volume attributes.
	Identity string
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
	// AttributesClasses reads the claims' VolumeAttributesClasses; nil
	// turns the VolumeAttributesClass feature off.
	AttributesClasses AttributesClasses
	// Attachments reads VolumeAttachments, so that no volume is deleted
	// while attached; nil when the driver does not attach volumes.
	Attachments Attachments
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
	// Translator translates between in-tree and CSI classes and volumes
	// for CSI migration; nil means csi-translation-lib, as upstream.
	Translator Translator
	// RequeueAfter puts a claim back on the provisioning queue after d,
	// when a changed refusal may be told (see refusals); nil: the claim
	// waits for the next change of its source or resync.
	RequeueAfter func(claim *v1.PersistentVolumeClaim, d time.Duration)
	// Now is the clock of refusal pacing; time.Now when nil.
	Now func() time.Time
}

// Provisioner provisions and deletes volumes of one CSI driver.
type Provisioner struct {
	driverName        string
	identity          string
	caps              csiclient.Capabilities
	driver            Driver
	client            kubernetes.Interface
	claims            corelisters.PersistentVolumeClaimLister
	volumes           corelisters.PersistentVolumeLister
	nodes             corelisters.NodeLister
	csiNodes          storagelisters.CSINodeLister
	classes           storagelisters.StorageClassLister
	attributesClasses AttributesClasses
	attachments       Attachments
	policy            claimsource.Policy
	protector         SourceProtector
	inflight          *inflight.Registry
	recorder          record.EventRecorder
	metrics           *metrics.Metrics
	opts              Options
	migration         migration
	notices           notices
	refusals          refusals
	saving            saving
	requeueAfter      func(*v1.PersistentVolumeClaim, time.Duration)
	now               func() time.Time
}

var (
	_ controller.Provisioner      = &Provisioner{}
	_ controller.Qualifier        = &Provisioner{}
	_ controller.BlockProvisioner = &Provisioner{}
)

// New returns a Provisioner for the given dependencies.
func New(cfg Config) *Provisioner {
	translator := cfg.Translator
	if translator == nil {
		translator = csitranslation.New()
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Provisioner{
		driverName: cfg.DriverName, identity: cfg.Identity, caps: cfg.Capabilities, driver: cfg.Driver, client: cfg.Client,
		claims: cfg.Claims, volumes: cfg.Volumes, nodes: cfg.Nodes, csiNodes: cfg.CSINodes, classes: cfg.Classes,
		attributesClasses: cfg.AttributesClasses, attachments: cfg.Attachments,
		policy: cfg.Policy, protector: cfg.Protector, inflight: cfg.InFlight, recorder: cfg.Recorder,
		metrics: cfg.Metrics, opts: cfg.Options, requeueAfter: cfg.RequeueAfter, now: now,
		migration: migration{translator: translator, inTreePlugin: MigratedInTreePlugin(translator, cfg.DriverName)},
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
	if !p.isOurs(claim) && p.inflight.Get(claim.UID) == nil {
		// As upstream: the PV controller provisions an in-tree class's
		// claim itself unless it hands it over with migrated-to.
		return nil, controller.ProvisioningFinished, &controller.IgnoredError{Reason: fmt.Sprintf(
			"PVC annotated with external-provisioner name %s does not match provisioner driver name %s. This could mean the PVC is not migrated",
			provisionerOf(claim), p.driverName)}
	}
	if pv := p.saving.of(claim.UID); pv != nil {
		// Re-queued while the library saves the PV an earlier call
		// returned: the same PV again, nothing sent, nothing counted.
		return pv, controller.ProvisioningFinished, nil
	}
	src, err := datasource.Resolve(claim)
	if err != nil {
		p.metrics.Observe(class.Name, src, p.policy.CrossesNamespaces(src), err)
		return nil, controller.ProvisioningNoChange, err
	}
	pv, state, err := p.provision(klog.NewContext(ctx, logger), opts)
	p.refusals.note(claim.UID, class.Name, err, p.now())
	p.refusals.waitingSince(claim.UID, claim.CreationTimestamp.Time)
	// The claim may have gone, been bound or handed over while it was
	// decided, its informer event handled before the note above: the
	// cache, updated before that event, says so now, and it waits no more.
	if current, gerr := p.claims.PersistentVolumeClaims(claim.Namespace).Get(claim.Name); gerr != nil || current.UID != claim.UID ||
		current.Spec.VolumeName != "" || !p.isOurs(current) {
		p.refusals.forget(claim.UID)
	}
	p.metrics.Observe(class.Name, src, p.policy.CrossesNamespaces(src), err)
	if err != nil {
		logger.V(2).Info("Provisioning did not succeed", "source", src.String(), "state", state, "err", err)
	}
	return pv, state, err
}

// provision reads as the steps it takes: an attempt whose CreateVolume may
// have run is finished or undone (resume); otherwise an in-tree class is
// translated to CSI (migration), the claim's source is resolved, its input
// gathered from the caches and decided (claimsource, in contentSource), the
// request prepared, the attempt recorded, the source protected,
// CreateVolume sent, its answer confirmed and the PV built (create).
func (p *Provisioner) provision(ctx context.Context, opts controller.ProvisionOptions) (*v1.PersistentVolume, controller.ProvisioningState, error) {
	claim := opts.PVC
	switch attempt, busy := p.inflight.Take(claim.UID); {
	case busy:
		// Settle is undoing or checking it; the library tries again.
		return nil, controller.ProvisioningInBackground, errors.New("an earlier CreateVolume of this claim is being settled")
	case attempt != nil:
		return p.resume(ctx, opts, attempt)
	}
	if current, err := p.claims.PersistentVolumeClaims(claim.Namespace).Get(claim.Name); err != nil || current.UID != claim.UID {
		// The library's own copy of a deleted claim whose attempt was
		// settled meanwhile: nothing is to be made for it.
		return nil, controller.ProvisioningFinished, &controller.IgnoredError{Reason: "claim deleted"}
	}
	if claim.Spec.Selector != nil {
		// As upstream: a selector picks among existing PVs, which a new
		// volume cannot honor.
		return nil, controller.ProvisioningNoChange, errors.New("claim Selector is not supported")
	}
	// The request is built from the class in CSI terms; create gets the
	// class the claim names, to give an in-tree class an in-tree PV.
	csiOpts := opts
	class, err := p.migration.classToCSI(ctx, opts.StorageClass)
	if err != nil {
		return nil, controller.ProvisioningNoChange, err
	}
	csiOpts.StorageClass = class
	src, content, err := p.contentSource(claim, class)
	if err != nil {
		return nil, controller.ProvisioningNoChange, err
	}
	topo, state, err := p.topologyRequirement(csiOpts)
	if err != nil {
		return nil, state, err
	}
	req, refs, err := p.prepare(ctx, csiOpts, content, topo)
	if err != nil {
		return nil, controller.ProvisioningNoChange, err
	}
	attempt := &inflight.Attempt{Claim: claim.UID, Namespace: claim.Namespace, Name: claim.Name, Request: req, Volume: opts.PVName}
	if content != nil {
		attempt.Source = src
	}
	// Recorded before the source is protected, so that from the moment the
	// finalizer is there, source protection counts this attempt as a use.
	p.inflight.Begin(attempt)
	if content != nil {
		if err := p.protect(ctx, claim, src); err != nil {
			p.inflight.End(claim.UID)
			return nil, controller.ProvisioningNoChange, err
		}
	}
	return p.create(ctx, opts, attempt, refs)
}
