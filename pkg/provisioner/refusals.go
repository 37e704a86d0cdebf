package provisioner

import (
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/pkg/claimsource"
)

// refusals remembers, per claim, the refusal its last attempt ended with,
// so that ShouldProvision can skip an attempt whose refusal would be the
// same. Every attempt costs the claim two events from the controller
// library (Provisioning, then ProvisioningFailed), and a claim waiting for
// a grant or a snapshot is re-queued by every change of the grants of the
// snapshot's namespace and of the snapshot (package requeue): under churn
// those repeats fill the event client's rate limit and client-go's per-object
// spam filter, and the event that says why a claim waits then arrives
// minutes late or not at all. The decision itself is never skipped: it is
// made again from the caches, and only an identical refusal is not
// announced again.
type refusals struct {
	mu   sync.Mutex
	last map[types.UID]refusal
}

// refusal is what a claim was last told, and the StorageClass it was
// decided for.
type refusal struct {
	className       string
	reason, message string
}

// note remembers the refusal err is, for a claim provisioned with the
// StorageClass className, or forgets the claim's refusal when err is not a
// refusal that waits for a change of the claim's source objects.
func (r *refusals) note(uid types.UID, className string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var refused *RefusedError
	if !errors.As(err, &refused) || !waitsForSource(claimsource.Reason(refused.Reason)) {
		delete(r.last, uid)
		return
	}
	if r.last == nil {
		r.last = map[types.UID]refusal{}
	}
	r.last[uid] = refusal{className: className, reason: refused.Reason, message: refused.Message}
}

// get returns the refusal the claim's last attempt ended with.
func (r *refusals) get(uid types.UID) (refusal, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	last, ok := r.last[uid]
	return last, ok
}

func (r *refusals) forget(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.last, uid)
}

// repeats reports whether verdict is the same refusal.
func (r refusal) repeats(verdict claimsource.Verdict) bool {
	return verdict.Action == claimsource.Refuse && string(verdict.Reason) == r.reason && verdict.Message == r.message
}

// waitsForSource reports whether a claim refused for reason can be
// provisioned only after one of the objects it names changes (a grant, a
// link, the snapshot or its content, the claim to clone or its volume), or
// the claim itself: each such change re-queues the claim (package requeue,
// the claim informer), and ShouldProvision then decides again. A cache
// that cannot be read is not such a reason: it may recover without an
// event for the claim's source, so those refusals keep the controller's
// retry backoff.
func waitsForSource(reason claimsource.Reason) bool {
	switch reason {
	case claimsource.ReasonGrantUnavailable, claimsource.ReasonLinkAPIUnavailable,
		claimsource.ReasonSnapshotAPIUnavailable, claimsource.ReasonSourceClaimUnreadable:
		return false
	}
	return true
}
