package sidecar

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"

	"github.com/xns-csi/csi-provisioner/internal/sidecar/capacity"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/capacity/owner"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/provisioner"
)

// csiDriver is the CSI client build needs: the provisioner's calls, and
// GetCapacity for storage capacity tracking.
type csiDriver interface {
	provisioner.Driver
	capacity.CSIClient
}

// libProvisioner is what the controller library calls on the provisioner.
// The node checks of --node-deployment and the capacity refreshes of
// --enable-capacity wrap it.
type libProvisioner interface {
	controller.Provisioner
	controller.Qualifier
	controller.BlockProvisioner
}

// newCapacity returns the controller that publishes CSIStorageCapacity
// objects (--enable-capacity), wired as internal/sidecar/capacity's documentation says,
// or nil when the flag is off. Its informers come from factory, which must
// be started afterwards.
//
// As upstream, a driver without the GET_CAPACITY capability is not refused:
// its GetCapacity calls fail and are retried, and the failure is logged.
func newCapacity(ctx context.Context, cfg buildConfig, factory informers.SharedInformerFactory) (*capacity.Controller, error) {
	opts := cfg.opts.Capacity
	if !opts.Enabled {
		return nil, nil
	}
	logger := klog.FromContext(ctx)
	if cfg.capacityKube == nil {
		return nil, errors.New("--enable-capacity needs a client for CSIStorageCapacity objects")
	}
	if !cfg.identity.caps.GetCapacity {
		logger.Error(nil, "The CSI driver does not advertise the GET_CAPACITY controller capability: with --enable-capacity, its GetCapacity calls will most likely fail and be retried",
			"driver", cfg.identity.name)
	}
	ref, err := owner.Lookup(ctx, cfg.capacityKube, opts.Namespace, opts.PodName, opts.OwnerRefLevel)
	if err != nil {
		return nil, fmt.Errorf("looking up the owner of CSIStorageCapacity objects (--capacity-ownerref-level=%d): %w", opts.OwnerRefLevel, err)
	}
	if ref != nil {
		logger.Info("Using the owner of CSIStorageCapacity objects", "apiVersion", ref.APIVersion, "kind", ref.Kind, "name", ref.Name)
	} else {
		logger.Info("CSIStorageCapacity objects get no owner", "ownerRefLevel", opts.OwnerRefLevel)
	}
	config := capacity.Config{
		DriverName: cfg.identity.name, Namespace: opts.Namespace, Owner: ref, ImmediateBinding: opts.ForImmediateBinding,
		Client: cfg.capacityKube, CSI: cfg.driver, StorageClasses: factory.Storage().V1().StorageClasses(),
		PollInterval: opts.PollInterval, RetryIntervalStart: cfg.opts.RetryIntervalStart, RetryIntervalMax: cfg.opts.RetryIntervalMax,
		ResyncPeriod: cfg.opts.ResyncPeriod, Registerer: cfg.registerer,
	}
	if local := cfg.identity.node; local != nil {
		// One sidecar per node publishes its node's segment, as NodeGetInfo
		// reports it, under a managed-by value of its own.
		segment := capacity.NewSegment(local.Segment)
		config.FixedSegment, config.ManagedBy = &segment, capacity.ManagedByForNode(local.Name)
		logger.Info("Producing CSIStorageCapacity objects with a fixed topology segment", "segment", segment.String(), "managedBy", config.ManagedBy)
	} else {
		config.Nodes, config.CSINodes = factory.Core().V1().Nodes(), factory.Storage().V1().CSINodes()
	}
	return capacity.New(config)
}

// withCapacityRefresh wraps p to ask c for fresh capacity after provisioning
// and deletion, or returns p when c is nil (capacity tracking off).
func withCapacityRefresh(p libProvisioner, c *capacity.Controller) libProvisioner {
	if c == nil {
		return p
	}
	return capacityRefresh{libProvisioner: p, capacity: c}
}

// capacityRefresh refreshes capacity objects where a provisioning or
// deletion probably changed them, now rather than at the next poll, as
// upstream's provision wrapper (internal/sidecar/capacity/provision.go) does.
type capacityRefresh struct {
	libProvisioner
	capacity *capacity.Controller
}

// Provision provisions, then refreshes the segments of the new volume's
// node affinity, or without one (network storage, where the class selects
// the pool) the class's objects. A failed attempt that changed something
// (any state but ProvisioningNoChange) refreshes the class too: the
// scheduler should choose again with fresh numbers.
func (p capacityRefresh) Provision(ctx context.Context, opts controller.ProvisionOptions) (*v1.PersistentVolume, controller.ProvisioningState, error) {
	pv, state, err := p.libProvisioner.Provision(ctx, opts)
	switch {
	case err == nil && pv != nil && pv.Spec.NodeAffinity != nil:
		p.capacity.RefreshTopology(ctx, pv.Spec.NodeAffinity)
	case err == nil && pv != nil, state != controller.ProvisioningNoChange:
		if opts.StorageClass != nil {
			p.capacity.RefreshClass(opts.StorageClass.Name)
		}
	}
	return pv, state, err
}

// Delete deletes, then refreshes the segments of the volume's node
// affinity; a volume without one names no class to refresh.
func (p capacityRefresh) Delete(ctx context.Context, pv *v1.PersistentVolume) error {
	err := p.libProvisioner.Delete(ctx, pv)
	if err == nil && pv.Spec.NodeAffinity != nil {
		p.capacity.RefreshTopology(ctx, pv.Spec.NodeAffinity)
	}
	return err
}
