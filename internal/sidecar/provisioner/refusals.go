package provisioner

import (
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
)

// refusals remembers, per claim, the refusal its last attempt ended with,
// so that ShouldProvision can hold back attempts that would only repeat
// events. Every attempt costs the claim two events from the controller
// library (Provisioning, then ProvisioningFailed), and a claim waiting for
// a grant or a snapshot is re-queued by every change of the grants of the
// snapshot's namespace and of the snapshot (package requeue). Under churn
// those events outran the events client's rate limit and client-go's
// per-object spam filter (25 events, then one per 5 minutes), and a claim's
// newest refusal arrived minutes late or never (the soak of
// docs/reliability.md). So:
//
//   - an unchanged refusal is not attempted again;
//   - a changed one is attempted (and told) at once the first time, then
//     after an interval that doubles from refusalPacingStart up to
//     refusalPacingMax, the newest refusal winning: a claim whose refusal
//     flaps (a grant created and deleted over and over, each changing the
//     refusal of a claim whose snapshot is gone) stays within the spam
//     filter's budget, and is always told its newest refusal in the end;
//   - a claim that can be provisioned is attempted at once.
//
// The decision itself is never held back: it is made again from the
// caches every time the claim is re-queued.
//
// It also remembers, for the gauges of waiting claims (EachWaitingClaim),
// every claim whose last attempt was refused, whatever the reason, and
// since when: the first of the refusals in a row, its reason changing or
// not. Any other outcome (provisioned, failed otherwise) ends the wait, as
// does the claim's deletion, binding or handing to another provisioner
// (ForgetClaim, ClaimChanged).
type refusals struct {
	mu      sync.Mutex
	last    map[types.UID]refusal
	waiting map[types.UID]waiting
}

// waiting is a claim's current refusal and the start of its run of
// refusals.
type waiting struct {
	reason string
	since  time.Time
}

// The pacing of changed refusals: an interval that doubles per refusal
// told, from refusalPacingStart up to refusalPacingMax, the rate at which
// client-go's spam filter refills (one event per object per 5 minutes).
const (
	refusalPacingStart = 10 * time.Second
	refusalPacingMax   = 5 * time.Minute
)

// refusal is what a claim was last told, when, and the StorageClass it was
// decided for.
type refusal struct {
	className       string
	reason, message string
	// told is when the claim was told; count how many refusals it was told.
	told  time.Time
	count int
}

// note remembers the refusal err is, told at now, for a claim provisioned
// with the StorageClass className, or forgets the claim's refusal when err
// is not a refusal that waits for a change of the claim's source objects.
// The claim waits while err is a refusal of any reason.
func (r *refusals) note(uid types.UID, className string, err error, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var refused *RefusedError
	if !errors.As(err, &refused) {
		delete(r.last, uid)
		delete(r.waiting, uid)
		return
	}
	r.wait(uid, refused.Reason, now)
	if !waitsForSource(claimsource.Reason(refused.Reason)) {
		delete(r.last, uid)
		return
	}
	if r.last == nil {
		r.last = map[types.UID]refusal{}
	}
	r.last[uid] = refusal{className: className, reason: refused.Reason, message: refused.Message,
		told: now, count: r.last[uid].count + 1}
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
	delete(r.waiting, uid)
}

// wait records the claim as refused for reason, waiting since now, or
// since its earlier refusal if its last attempt was refused too. Call with
// r locked.
func (r *refusals) wait(uid types.UID, reason string, now time.Time) {
	if r.waiting == nil {
		r.waiting = map[types.UID]waiting{}
	}
	since := now
	if earlier, ok := r.waiting[uid]; ok {
		since = earlier.since
	}
	r.waiting[uid] = waiting{reason: reason, since: since}
}

// waitingSince dates the wait of a refused claim from created, its
// creation, when that is earlier: a claim is pending, so waiting, from its
// creation, and so its age survives a restart or a change of leader.
func (r *refusals) waitingSince(uid types.UID, created time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w, ok := r.waiting[uid]; ok && !created.IsZero() && created.Before(w.since) {
		w.since = created
		r.waiting[uid] = w
	}
}

// eachWaiting calls visit with the reason and start of each claim's wait,
// under the lock.
func (r *refusals) eachWaiting(visit func(reason string, since time.Time)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.waiting {
		visit(w.reason, w.since)
	}
}

// repeats reports whether verdict is the same refusal.
func (r refusal) repeats(verdict claimsource.Verdict) bool {
	return verdict.Action == claimsource.Refuse && string(verdict.Reason) == r.reason && verdict.Message == r.message
}

// nextAt is when the claim may be told another refusal: at once after its
// first, then after an interval doubling from refusalPacingStart up to
// refusalPacingMax.
func (r refusal) nextAt() time.Time {
	if r.count <= 1 {
		return r.told
	}
	interval := refusalPacingStart
	for told := 2; told < r.count && interval < refusalPacingMax; told++ {
		interval *= 2
	}
	return r.told.Add(min(interval, refusalPacingMax))
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
