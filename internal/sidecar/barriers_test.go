package sidecar

import (
	"fmt"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// Barriers let a test assert that the sidecar did NOT do something, once it
// has seen that the sidecar handled what could have made it do it. The
// sidecar's caches and queues are out of the tests' reach, so a barrier
// writes an object whose handling shows and that the sidecar can only handle
// after what the test wrote before: an informer applies the events of one
// resource in the order they were written, and a queue worked by one worker
// is worked in order.

// claimsSeen waits until the sidecar's claim cache holds every claim written
// so far: it creates a claim of this driver without a source and waits for
// its PV, which the ProvisionController makes only once the cache holds that
// claim, and so every claim written before it. With oneProvisioningWorker,
// the ProvisionController has also decided on every claim queued before it.
func (e *env) claimsSeen() {
	e.t.Helper()
	e.barriers++
	e.waitForPV(e.createClaim("barriers", fmt.Sprintf("claims-seen-%d", e.barriers)))
}

// protectionSeen waits until source protection has decided on every
// snapshot written so far; it needs oneProtectionWorker. A snapshot that
// carries the finalizer and that no claim restores is released when the
// worker gets to it, after the sources queued before it. It takes two: a
// source being worked on when an event for it comes is queued again only
// when that work ends, which may be behind the first.
func (e *env) protectionSeen() {
	e.t.Helper()
	if e.protectionWorkers != 1 {
		e.t.Fatal("protectionSeen needs oneProtectionWorker()")
	}
	for range 2 {
		e.barriers++
		name := fmt.Sprintf("protection-seen-%d", e.barriers)
		snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: "barriers", Name: name, ResourceVersion: "1",
			Finalizers: []string{datasource.SnapshotFinalizer}}}
		if _, err := e.snaps.SnapshotV1().VolumeSnapshots("barriers").Create(e.ctx, snap, metav1.CreateOptions{}); err != nil {
			e.t.Fatal(err)
		}
		e.waitFor("source protection to release "+name, func() bool {
			return !hasString(e.snapshotFinalizers("barriers", name), datasource.SnapshotFinalizer)
		})
	}
}

// grantProbe reads the sidecar's ReferenceGrant cache through the sidecar's
// own decision. It is a claim restoring a snapshot of another namespace that
// can never be provisioned, as it requests less than the snapshot's restore
// size. The grant is checked first: while a grant allows the reference the
// probe is refused for its size, and once none does, for want of a grant.
// It waits on the grants of the snapshot's namespace, so that every change
// there re-queues it.
type grantProbe struct {
	e     *env
	claim *v1.PersistentVolumeClaim
	// notGranted is part of the message of a refusal for want of a grant;
	// refused counts those the probe got before the cache allowed it.
	notGranted string
	refused    int32
}

// probeGrant creates a probe of whether claims in fromNamespace may restore
// the ready 1Gi snapshot namespace/name, and waits until the sidecar's grant
// cache allows it.
func (e *env) probeGrant(fromNamespace, namespace, snapshot string) *grantProbe {
	e.t.Helper()
	e.barriers++
	p := &grantProbe{e: e, notGranted: fmt.Sprintf("no ReferenceGrant in namespace %q allows PersistentVolumeClaims in namespace %q",
		namespace, fromNamespace)}
	p.claim = e.createClaim(fromNamespace, fmt.Sprintf("grant-probe-%d", e.barriers), fromSnapshot(namespace, snapshot), withSize("10Mi"))
	e.waitForEvent(p.claim, v1.EventTypeWarning, "ProvisioningFailed", "request at least")
	// One recorder writes the refusals in order: any for want of a grant
	// came before the one for the size.
	p.refused = e.eventCount(p.claim, v1.EventTypeWarning, "ProvisioningFailed", p.notGranted)
	return p
}

// waitRevoked waits until the sidecar's grant cache no longer allows the
// probed reference: the probe is refused for want of a grant once more.
func (p *grantProbe) waitRevoked() {
	p.e.t.Helper()
	p.e.waitFor("the grant cache to refuse the reference of "+p.claim.Name, func() bool {
		return p.e.eventCount(p.claim, v1.EventTypeWarning, "ProvisioningFailed", p.notGranted) > p.refused
	})
}
