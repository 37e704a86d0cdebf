package nodedeployment

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/util"
)

// Clock is the part of k8s.io/utils/clock a waiting node uses;
// clock.RealClock implements it.
type Clock interface {
	NewTimer(d time.Duration) clock.Timer
	NewTicker(d time.Duration) clock.Ticker
}

// Config holds what a Deployment needs. The flags map one to one:
// --node-deployment-immediate-binding, --node-deployment-base-delay and
// --node-deployment-max-delay.
type Config struct {
	// Node is this node: NewLocal(NODE_NAME, the driver's NodeGetInfo).
	Node Local
	// TopologyAware is whether the driver has the
	// VOLUME_ACCESSIBILITY_CONSTRAINTS capability (and the Topology gate
	// is on); only then does a node check a class's allowedTopologies
	// before it claims a claim.
	TopologyAware bool
	// Client gets and updates claims: the one write is the selected-node
	// annotation.
	Client kubernetes.Interface
	// Claims is the lister of the claim informer the controller library
	// runs, over all claims (not filtered by node): a waiting node watches
	// it for another node becoming the owner.
	Claims corelisters.PersistentVolumeClaimLister
	// Classes finds a claim's StorageClass when the caller does not pass it.
	Classes storagelisters.StorageClassLister
	// ImmediateBinding lets nodes claim claims of immediately binding
	// classes; without it such claims wait for someone else to select a
	// node.
	ImmediateBinding bool
	// BaseDelay and MaxDelay bound the wait before a claim attempt: see
	// Delay.
	BaseDelay, MaxDelay time.Duration
	// Capacity, if set, is asked just before claiming; see CapacityFunc.
	// Nil claims without asking.
	Capacity CapacityFunc
	// Clock times the waits; nil is the real clock.
	Clock Clock
	// Rand returns the jitter fraction in [0, 1); nil is math/rand/v2.
	Rand func() float64
}

// Deployment decides, on one node, which claims that node's sidecar
// provisions and deletes, and claims immediately bound claims for the node.
// A nil *Deployment is the central (one per cluster) deployment: it
// provisions and deletes everything. It is safe for concurrent use.
type Deployment struct {
	node             Local
	topologyAware    bool
	client           kubernetes.Interface
	claims           corelisters.PersistentVolumeClaimLister
	classes          storagelisters.StorageClassLister
	immediateBinding bool
	baseDelay        time.Duration
	maxDelay         time.Duration
	capacity         CapacityFunc
	clock            Clock
	rand             func() float64
	attempts         attempts
}

// New checks cfg and returns the Deployment for its node.
func New(cfg Config) (*Deployment, error) {
	var errs []error
	if cfg.Node.Name == "" {
		errs = append(errs, errors.New("node name is empty: set NODE_NAME"))
	}
	if cfg.Client == nil || cfg.Claims == nil || cfg.Classes == nil {
		errs = append(errs, errors.New("client, claim lister and class lister are required"))
	}
	if cfg.BaseDelay < 0 || cfg.MaxDelay < cfg.BaseDelay {
		errs = append(errs, fmt.Errorf("base delay %v must be between 0 and max delay %v", cfg.BaseDelay, cfg.MaxDelay))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	d := &Deployment{node: cfg.Node, topologyAware: cfg.TopologyAware, client: cfg.Client, claims: cfg.Claims,
		classes: cfg.Classes, immediateBinding: cfg.ImmediateBinding, baseDelay: cfg.BaseDelay, maxDelay: cfg.MaxDelay,
		capacity: cfg.Capacity, clock: cfg.Clock, rand: cfg.Rand}
	if d.clock == nil {
		d.clock = clock.RealClock{}
	}
	if d.rand == nil {
		d.rand = rand.Float64
	}
	return d, nil
}

// ShouldProvision is the node check of the provisioner's ShouldProvision:
// false leaves the claim without an event. It returns true only for a claim
// assigned to this node. A claim without a selected node that this node
// can serve is claimed first, which blocks for the delay (see Owns); the
// claim then comes back through the informer with its new annotation. If
// the check fails, it returns true so that Provision checks again and
// reports the error as an event, as upstream.
func (d *Deployment) ShouldProvision(ctx context.Context, claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass) bool {
	if d == nil {
		return true
	}
	owned, err := d.Owns(ctx, claim, class)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Trying to become the owner of the claim in advance failed, will try again during provisioning",
			"pvc", klog.KObj(claim), "node", d.node.Name, "err", err)
		return true
	}
	return owned
}

// CheckProvision is the node check at the start of the provisioner's
// Provision, before a new CreateVolume: nil lets provisioning go on; a
// *controller.IgnoredError means the claim is not this node's; any other
// error means the check failed. Provision returns ProvisioningNoChange with
// either error.
func (d *Deployment) CheckProvision(ctx context.Context, claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass) error {
	if d == nil {
		return nil
	}
	owned, err := d.Owns(ctx, claim, class)
	if err != nil {
		return fmt.Errorf("node check failed: %w", err)
	}
	if !owned {
		return &controller.IgnoredError{Reason: fmt.Sprintf("not responsible for provisioning of PVC %s/%s because it is not assigned to node %q",
			claim.Namespace, claim.Name, d.node.Name)}
	}
	return nil
}

// CheckDelete is the node check at the start of the provisioner's Delete:
// nil lets this node delete the volume; a *controller.IgnoredError means
// the volume is not on this node (its own node's sidecar deletes it); any
// other error means the volume's node affinity cannot be evaluated.
func (d *Deployment) CheckDelete(pv *v1.PersistentVolume) error {
	if d == nil {
		return nil
	}
	ok, err := VolumeAccessible(pv.Spec.NodeAffinity, d.node)
	if err != nil {
		return fmt.Errorf("checking volume affinity failed: %w", err)
	}
	if !ok {
		return &controller.IgnoredError{Reason: "PV was not provisioned on this node"}
	}
	return nil
}

// Owns reports whether this node provisions the claim now (Decide). When
// the decision is to claim it, Owns first waits (Delay, abandoning the wait
// as soon as the claim cache shows another owner), checks capacity, and
// sets the selected-node annotation to this node with an update that fails
// on any concurrent change, so only one node wins. It returns false in that
// case too, whether this node won or not: the claim's next informer event
// decides. class may be nil; it is then read from the cache if needed.
func (d *Deployment) Owns(ctx context.Context, claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass) (bool, error) {
	if SelectedNode(claim) == "" && class == nil {
		name := util.GetPersistentVolumeClaimClass(claim)
		if name == "" {
			return false, fmt.Errorf("PVC %s has no StorageClass", klog.KObj(claim))
		}
		var err error
		if class, err = d.classes.Get(name); err != nil {
			return false, fmt.Errorf("PVC %s: %w", klog.KObj(claim), err)
		}
	}
	in := Input{Node: d.node.Name, SelectedNode: SelectedNode(claim), Class: class, ImmediateBinding: d.immediateBinding}
	if d.topologyAware {
		in.Topology = &d.node
	}
	decision := Decide(in)
	klog.FromContext(ctx).V(5).Info("Node check", "pvc", klog.KObj(claim), "resourceVersion", claim.ResourceVersion,
		"action", decision.Action, "reason", decision.Reason, "message", decision.Message)
	switch decision.Action {
	case Provision:
		return true, nil
	case Claim:
		if err := d.claim(ctx, claim, class); err != nil {
			return false, fmt.Errorf("PVC %s: %w", klog.KObj(claim), err)
		}
	}
	return false, nil
}

// ClaimHandler is to be added to the claim informer: a deleted claim's
// delay is forgotten.
func (d *Deployment) ClaimHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if unknown, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = unknown.Obj
		}
		if claim, ok := obj.(*v1.PersistentVolumeClaim); ok {
			d.attempts.forget(claim.UID)
		}
	}}
}
