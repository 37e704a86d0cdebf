package provisioner

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/xns-csi/csi-provisioner/pkg/datasource"
)

// Annotations the PV controller puts on claims it hands to a provisioner.
const (
	annStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	annBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
)

// Event reasons for claims this provisioner deliberately leaves alone.
const (
	// ReasonCrossNamespaceDisabled: the claim names another namespace but
	// the feature gate is off.
	ReasonCrossNamespaceDisabled = "CrossNamespaceSourceDisabled"
	// ReasonExternalPopulator: the claim's source is a populator's kind.
	ReasonExternalPopulator = "WaitingForPopulator"
)

// ShouldProvision filters out, before the controller library announces
// provisioning, the claims of this driver that it must not provision: those
// whose source is a volume populator's kind (KEP-1495) and those naming
// another namespace while the feature gate is off. Each gets one event.
func (p *Provisioner) ShouldProvision(ctx context.Context, claim *v1.PersistentVolumeClaim) bool {
	if !p.isOurs(claim) {
		return true // the library ignores claims of other provisioners
	}
	src, err := datasource.Resolve(claim)
	if err != nil {
		return true // Provision reports the error as a PVC event
	}
	switch {
	case src.Type() == datasource.Populator:
		p.noticeOnce(ctx, claim, v1.EventTypeNormal, ReasonExternalPopulator,
			"the data source "+src.String()+" is not a VolumeSnapshot or PersistentVolumeClaim; waiting for its volume populator to fill the volume")
		return false
	case src.NeedsGrant() && !p.crossNamespace:
		p.noticeOnce(ctx, claim, v1.EventTypeWarning, ReasonCrossNamespaceDisabled,
			"spec.dataSourceRef.namespace names "+src.String()+", but the provisioner's CrossNamespaceSourceProvisioning feature gate is off; the claim is not provisioned")
		return false
	}
	return true
}

// ForgetClaim drops what the provisioner remembers of a deleted claim.
func (p *Provisioner) ForgetClaim(uid types.UID) { p.notices.forget(uid) }

func (p *Provisioner) isOurs(claim *v1.PersistentVolumeClaim) bool {
	name, ok := claim.Annotations[annStorageProvisioner]
	if !ok {
		name = claim.Annotations[annBetaStorageProvisioner]
	}
	return name == p.driverName
}

func (p *Provisioner) noticeOnce(ctx context.Context, claim *v1.PersistentVolumeClaim, eventType, reason, message string) {
	if !p.notices.first(claim.UID, reason) {
		return
	}
	klog.FromContext(ctx).V(2).Info("Not provisioning claim", "pvc", klog.KObj(claim), "reason", reason)
	p.recorder.Event(claim, eventType, reason, message)
}

// notices remembers which claims were already told why they are left alone,
// so informer resyncs do not repeat the event.
type notices struct {
	mu   sync.Mutex
	sent map[types.UID]string
}

func (n *notices) first(uid types.UID, reason string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.sent == nil {
		n.sent = map[types.UID]string{}
	}
	if n.sent[uid] == reason {
		return false
	}
	n.sent[uid] = reason
	return true
}

func (n *notices) forget(uid types.UID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.sent, uid)
}
