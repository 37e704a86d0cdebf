package provisioner

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
)

// Annotations the PV controller puts on claims it hands to a provisioner.
const (
	annStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	annBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
)

// ShouldProvision filters out, before the controller library announces
// provisioning, the claims that are not this driver's (see isOurs) and the
// claims of this driver that it must leave alone (see
// claimsource.LeaveAlone): those whose source is a volume populator's kind
// (KEP-1495) and those naming another namespace while the feature gate is
// off. Each of the latter gets one event. A claim whose CreateVolume may
// still be running is never filtered out: it must be finished or undone.
func (p *Provisioner) ShouldProvision(ctx context.Context, claim *v1.PersistentVolumeClaim) bool {
	if p.inflight.Get(claim.UID) != nil {
		return true
	}
	if !p.isOurs(claim) {
		// As upstream: with the in-tree plugin's name registered for CSI
		// migration, the library takes the plugin's claims for this
		// driver's; those the PV controller provisions itself are not.
		return false
	}
	_, verdict, err := p.policy.Admit(claim)
	if err != nil || verdict.Action != claimsource.LeaveAlone {
		// Provision reports errors and refusals as PVC events, paced
		// (see refusals).
		return !p.holdBack(ctx, claim)
	}
	eventType := v1.EventTypeWarning
	if verdict.Reason == claimsource.ReasonWaitingForPopulator {
		eventType = v1.EventTypeNormal
	}
	p.noticeOnce(ctx, claim, eventType, string(verdict.Reason), verdict.Message)
	return false
}

// holdBack reports whether an attempt for the claim would only repeat its
// last refusal's events, or tell a changed refusal sooner than refusals
// paces it; in that case the claim is re-queued for when it may be told.
// A claim that can be provisioned now is never held back.
func (p *Provisioner) holdBack(ctx context.Context, claim *v1.PersistentVolumeClaim) bool {
	last, ok := p.refusals.get(claim.UID)
	if !ok || !p.requeuedOnChange(last) {
		return false
	}
	_, verdict, err := p.policy.Decide(claim, last.className)
	logger := klog.FromContext(ctx).WithValues("pvc", klog.KObj(claim), "reason", verdict.Reason)
	switch {
	case err != nil || verdict.Action != claimsource.Refuse:
		return false
	case last.repeats(verdict):
		logger.V(4).Info("Refusal unchanged, not attempting again until the source changes")
		return true
	}
	wait := last.nextAt().Sub(p.now())
	if wait <= 0 {
		return false
	}
	logger.V(4).Info("Refusal changed, telling the claim later", "after", wait)
	if p.requeueAfter != nil {
		p.requeueAfter(claim, wait)
	}
	return true
}

// requeuedOnChange reports whether a change that could end the refusal
// re-queues the claim. Grants and links always do; snapshots and contents
// only while they are watched: with the upstream provisioner's RBAC (no
// watch on contents) they are read with GETs, and a claim waiting on them
// keeps the controller's retry backoff, as upstream.
func (p *Provisioner) requeuedOnChange(last refusal) bool {
	switch claimsource.Reason(last.reason) {
	case claimsource.ReasonGrantMissing, claimsource.ReasonLinkNotFound:
		return true
	}
	direct, ok := p.policy.Snapshots.(interface{ ReadsDirectly() bool })
	return !ok || !direct.ReadsDirectly()
}

// ForgetClaim drops what the provisioner remembers of a deleted claim.
func (p *Provisioner) ForgetClaim(uid types.UID) {
	p.notices.forget(uid)
	p.refusals.forget(uid)
}

// ClaimChanged drops what the provisioner remembers of a claim it will not
// be asked to provision any more, though it exists: one bound to a volume
// (by this process, by another, or by hand) or handed to another
// provisioner. Else a claim refused before that would count as waiting
// until it is deleted.
func (p *Provisioner) ClaimChanged(claim *v1.PersistentVolumeClaim) {
	if claim.Spec.VolumeName != "" || !p.isOurs(claim) {
		p.ForgetClaim(claim.UID)
	}
}

// EachWaitingClaim calls visit with each claim this provisioner refused
// at its last attempt: the refusal's reason (a claimsource reason), and
// when the claim's run of refusals began, however its reason changed
// since. A claim leaves it when an attempt ends otherwise, or through
// ForgetClaim and ClaimChanged. It holds a lock while visiting: visit must
// not call the provisioner.
func (p *Provisioner) EachWaitingClaim(visit func(reason string, since time.Time)) {
	p.refusals.eachWaiting(visit)
}

// isOurs reports whether the PV controller handed the claim to this
// driver: its provisioner annotation names the driver or, as upstream, its
// migrated-to annotation does (the claim of an in-tree class under CSI
// migration).
func (p *Provisioner) isOurs(claim *v1.PersistentVolumeClaim) bool {
	return provisionerOf(claim) == p.driverName || claim.Annotations[annMigratedTo] == p.driverName
}

// provisionerOf is the provisioner the claim's annotation names, the GA
// annotation first.
func provisionerOf(claim *v1.PersistentVolumeClaim) string {
	name, ok := claim.Annotations[annStorageProvisioner]
	if !ok {
		name = claim.Annotations[annBetaStorageProvisioner]
	}
	return name
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
