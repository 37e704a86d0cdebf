package nodedeployment

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// claim tries to make this node the claim's owner, as upstream's
// becomeOwner: wait Delay (abandoning the wait once the cache shows another
// owner), check capacity, then select this node. A conflict means another
// writer came first: try again after a longer delay, which normally ends
// at the first poll, when the cache shows the winner. It returns nil when
// this node became the owner, another node did, or this node has no room;
// an error when the claim is gone or replaced, the wait was canceled, or
// the API refused the update.
//
// Whether the next try waits longer is kept per claim: a try that lost a
// conflict or found no room makes the next one wait longer; winning or
// seeing another owner resets it (so a claim rescheduled later starts
// from the base delay again), as does the claim's deletion (ClaimHandler).
func (d *Deployment) claim(ctx context.Context, claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass) error {
	logger := klog.FromContext(ctx).WithValues("pvc", klog.KObj(claim), "node", d.node.Name)
	for {
		attempt := d.attempts.next(claim.UID)
		delay := Delay(attempt, d.baseDelay, d.maxDelay, d.rand())
		logger.V(5).Info("Waiting before trying to become the owner of the claim",
			"resourceVersion", claim.ResourceVersion, "delay", delay, "attempt", attempt)
		owner, err := d.wait(ctx, claim, delay)
		if err != nil {
			return err
		}
		if owner != "" {
			d.attempts.forget(claim.UID)
			logger.V(5).Info("Another node became the owner of the claim", "owner", owner)
			return nil
		}
		// Capacity is checked as late as possible: it costs GetCapacity calls.
		if d.capacity != nil {
			ok, err := d.capacity(ctx, claim, class)
			if err != nil {
				logger.V(3).Info("Trying to become the owner of the claim although the capacity check failed", "err", err)
			} else if !ok {
				logger.V(5).Info("Not enough capacity on this node for the claim")
				return nil
			}
		}
		owner, err = d.selectThisNode(ctx, claim)
		if apierrors.IsConflict(err) {
			logger.V(3).Info("Conflict while selecting this node for the claim, will try again")
			continue
		}
		if err != nil {
			return fmt.Errorf("selecting node %q for PVC failed: %w", d.node.Name, err)
		}
		d.attempts.forget(claim.UID)
		logger.V(5).Info("Owner of the claim selected", "owner", owner)
		return nil
	}
}

// wait waits delay and returns the claim's owner if another node became it
// meanwhile, "" if none did. It looks into the claim cache when the delay
// is over and every PollInterval before, to stop early.
func (d *Deployment) wait(ctx context.Context, claim *v1.PersistentVolumeClaim, delay time.Duration) (string, error) {
	timer := d.clock.NewTimer(delay)
	defer timer.Stop()
	ticker := d.clock.NewTicker(PollInterval(d.baseDelay))
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("timed out waiting to become PVC owner: %w", context.Cause(ctx))
		case <-timer.C():
			return d.otherOwner(claim)
		case <-ticker.C():
			if owner, err := d.otherOwner(claim); err != nil || owner != "" {
				return owner, err
			}
		}
	}
}

// otherOwner returns the node other than this one that the cached claim is
// assigned to, "" if none.
func (d *Deployment) otherOwner(claim *v1.PersistentVolumeClaim) (string, error) {
	current, err := d.claims.PersistentVolumeClaims(claim.Namespace).Get(claim.Name)
	if err != nil {
		return "", fmt.Errorf("PVC not found: %w", err)
	}
	if current.UID != claim.UID {
		return "", errors.New("PVC was replaced")
	}
	if owner := SelectedNode(current); owner != d.node.Name {
		return owner, nil
	}
	return "", nil
}

// selectThisNode sets the claim's selected node to this node unless some
// node is selected already, and returns the owner. It reads the claim from
// the API, not the cache: the cache drops fields (internal/shared/cachetrim) that an
// update would then erase. The update carries the resourceVersion read, so
// it fails with a conflict if anyone changed the claim in between: of the
// nodes that read the claim without owner, exactly one wins.
func (d *Deployment) selectThisNode(ctx context.Context, claim *v1.PersistentVolumeClaim) (string, error) {
	claims := d.client.CoreV1().PersistentVolumeClaims(claim.Namespace)
	current, err := claims.Get(ctx, claim.Name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if current.UID != claim.UID {
		return "", errors.New("PVC was replaced")
	}
	if owner := SelectedNode(current); owner != "" {
		return owner, nil
	}
	if current.Annotations == nil {
		current.Annotations = map[string]string{}
	}
	current.Annotations[AnnSelectedNode] = d.node.Name
	if _, err := claims.Update(ctx, current, metav1.UpdateOptions{}); err != nil {
		return "", err
	}
	return d.node.Name, nil
}
