package sidecar

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/xns-csi/csi-provisioner/internal/sidecar/inflight"
)

// settlers is the number of workers settling parked attempts; an attempt
// is settled by at most one CreateVolume and one DeleteVolume.
const settlers = 2

// settler settles the attempts whose CreateVolume outcome is unknown
// (provisioner.Settle) outside the controller library's queue, which drops
// a claim as soon as it names a volume or another provisioner or its
// StorageClass is gone: an attempt is checked when it is parked, when its
// claim changes or is deleted, and again and again while it stays in
// progress (from --retry-interval-start, doubling to --retry-interval-max).
type settler struct {
	settle   func(ctx context.Context, claim types.UID) (bool, error)
	attempts *inflight.Registry
	queue    workqueue.TypedRateLimitingInterface[types.UID]
}

func newSettler(settle func(context.Context, types.UID) (bool, error), attempts *inflight.Registry, opts *Options) *settler {
	s := &settler{settle: settle, attempts: attempts,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[types.UID](opts.RetryIntervalStart, opts.RetryIntervalMax),
			workqueue.TypedRateLimitingQueueConfig[types.UID]{Name: "inflight-settle"})}
	attempts.OnPark(func(a *inflight.Attempt) { s.queue.AddRateLimited(a.Claim) })
	return s
}

// ClaimHandler queues the attempt of a claim that changed or went away.
func (s *settler) ClaimHandler() cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if claim, ok := obj.(*v1.PersistentVolumeClaim); ok && s.attempts.Get(claim.UID) != nil {
			s.queue.Add(claim.UID)
		}
	}
	return cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, n any) { enqueue(n) }, DeleteFunc: enqueue}
}

// Run settles attempts until ctx is done.
func (s *settler) Run(ctx context.Context, workers int) {
	defer s.queue.ShutDown()
	for range workers {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for s.processNext(ctx) {
			}
		}, time.Second)
	}
	<-ctx.Done()
}

func (s *settler) processNext(ctx context.Context) bool {
	uid, shutdown := s.queue.Get()
	if shutdown {
		return false
	}
	defer s.queue.Done(uid)
	settled, err := s.settle(ctx, uid)
	switch {
	case err != nil:
		klog.FromContext(ctx).Error(err, "Cannot settle a CreateVolume whose outcome is unknown", "claimUID", uid)
		s.queue.AddRateLimited(uid)
	case settled:
		s.queue.Forget(uid)
	case s.attempts.Get(uid) != nil:
		// Held by Provision now, or left to it: look again, sooner while
		// it is being sent.
		s.queue.AddRateLimited(uid)
	}
	return true
}
