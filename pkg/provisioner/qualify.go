package provisioner

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/xns-csi/csi-provisioner/pkg/claimsource"
)

// Annotations the PV controller puts on claims it hands to a provisioner.
const (
	annStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	annBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
)

// ShouldProvision filters out, before the controller library announces
// provisioning, the claims of this driver that it must leave alone (see
// claimsource.LeaveAlone): those whose source is a volume populator's kind
// (KEP-1495) and those naming another namespace while the feature gate is
// off. Each gets one event. A claim whose CreateVolume may still be running
// is never filtered out: it must be finished or undone.
func (p *Provisioner) ShouldProvision(ctx context.Context, claim *v1.PersistentVolumeClaim) bool {
	if !p.isOurs(claim) || p.inflight.Get(claim.UID) != nil {
		return true // the library ignores claims of other provisioners
	}
	_, verdict, err := p.policy.Admit(claim)
	if err != nil || verdict.Action != claimsource.LeaveAlone {
		return true // Provision reports errors and refusals as PVC events
	}
	eventType := v1.EventTypeWarning
	if verdict.Reason == claimsource.ReasonWaitingForPopulator {
		eventType = v1.EventTypeNormal
	}
	p.noticeOnce(ctx, claim, eventType, string(verdict.Reason), verdict.Message)
	return false
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
	klog.FromContext(ctx).V(2).Info("Telling the claim once", "pvc", klog.KObj(claim), "reason", reason)
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
