package optionalapi

import (
	"context"
	"maps"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Run waits until a candidate is served, then runs its informer until ctx is
// done. It never waits for the informer to sync before returning control to
// anything else: callers run it in its own goroutine, and Informer tells them
// whether the API can be used yet. Run returns when ctx is done, or early if
// Config.Prepare fails. Call it once.
//
// When the API server refuses the informer's list or watch, Run stops it
// and checks the permission again with a growing interval (see
// waitUntilAllowed), so a missing RBAC verb costs a cheap request every few
// minutes rather than a LIST of every object over and over. When a synced
// informer's version is no longer served, Run replaces it at once, with the
// candidate discovery finds served then (waiting until one is). Either
// way the new informer's cache starts empty and counts as synced only once
// its first list has been applied: the old cache may hold objects deleted
// meanwhile, and a relist into it would be applied a little after the list
// returns, too late to tell when it can be trusted again.
func (a *API) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("api", a.cfg.Name)
	ctx = klog.NewContext(ctx, logger)

	apiCtx := ctx
	chosen, ok := a.waitUntilServed(apiCtx)
	if !ok {
		return
	}
	c := a.cfg.Candidates[chosen]
	logger = logger.WithValues("resource", c.String())
	ctx = klog.NewContext(apiCtx, logger)

	retry := a.newRetryBackoff()
	for {
		run := &informerRun{end: make(chan ending, 1)}
		inf, err := a.build(c, run)
		if err != nil {
			a.update(func(s *status) { s.chosen, s.prepareErr = chosen, err })
			logger.Error(err, "Cannot start the informer of an optional API")
			return
		}
		a.mu.Lock()
		a.status.chosen, a.informer = chosen, inf
		a.mu.Unlock()
		switch a.runInformer(ctx, inf, c, run) {
		case stopped:
			return
		case unserved:
			// Discovery chooses again: the version no longer served may
			// have given way to another candidate (a CRD's v1 withdrawn,
			// its v1beta1 still served), or to none for a while.
			logger.Info("Replacing the informer of an optional API: the API server no longer serves it", "reason", a.describe())
			if chosen, ok = a.waitUntilServed(apiCtx); !ok {
				return
			}
			c = a.cfg.Candidates[chosen]
			logger = klog.FromContext(apiCtx).WithValues("resource", c.String())
			ctx = klog.NewContext(apiCtx, logger)
			continue
		}
		// A refusal after a long healthy run starts a new series of
		// checks; one soon after the last resumption continues the series.
		if !run.syncedAt.IsZero() && a.cfg.Clock.Now().Sub(run.syncedAt) >= a.cfg.RetryRefusedMax {
			retry = a.newRetryBackoff()
		}
		if !a.waitUntilAllowed(ctx, c, retry) {
			return
		}
	}
}

// ending is why runInformer returned.
type ending int

const (
	// stopped: ctx is done.
	stopped ending = iota
	// refused: the API server refused a list or watch.
	refused
	// unserved: the synced informer's version is no longer served.
	unserved
)

// informerRun is one informer's life. end receives why it must stop;
// refused (under API.mu) keeps a refusal that came before the informer
// synced from being overwritten by that sync; syncedAt is when it synced
// (zero if never), for runInformer's caller.
type informerRun struct {
	end      chan ending
	refused  bool
	syncedAt time.Time
}

// stop records why the informer must stop, once.
func (r *informerRun) stop(why ending) {
	select {
	case r.end <- why:
	default:
	}
}

// runInformer runs inf until ctx is done or the informer must stop, and
// returns why.
func (a *API) runInformer(ctx context.Context, inf cache.SharedIndexInformer, c Candidate, run *informerRun) ending {
	logger := klog.FromContext(ctx)
	informerCtx, stop := context.WithCancel(ctx)
	informerDone := make(chan struct{})
	go func() {
		defer close(informerDone)
		inf.RunWithContext(informerCtx)
	}()
	defer func() {
		stop()
		<-informerDone
	}()

	logger.Info("Starting the informer of an optional API")
	select {
	case <-ctx.Done():
		return stopped
	case why := <-run.end:
		return why
	case <-inf.HasSyncedChecker().Done():
	}
	synced, now := false, a.cfg.Clock.Now()
	a.update(func(s *status) {
		if !run.refused {
			s.synced, s.listErr, s.refused = true, nil, nil
			synced = true
		}
	})
	if synced {
		run.syncedAt = now
		logger.Info("Informer of an optional API synced")
		if a.cfg.OnSynced != nil {
			a.cfg.OnSynced(c)
		}
	}
	select {
	case <-ctx.Done():
		return stopped
	case why := <-run.end:
		return why
	}
}

// waitUntilServed polls discovery until a candidate is served and returns its
// index; ok is false if ctx ended first.
func (a *API) waitUntilServed(ctx context.Context) (chosen int, ok bool) {
	logger := klog.FromContext(ctx)
	disc := discovery.ToDiscoveryInterfaceWithContext(a.cfg.Discovery)
	loggedWaiting := false
	err := wait.PollUntilContextCancel(ctx, a.cfg.PollInterval, true, func(ctx context.Context) (bool, error) {
		i, err := servedCandidate(ctx, disc, a.cfg.Candidates)
		a.update(func(s *status) {
			// chosen with discovered, or the status would say "not
			// served" for a moment (Settled would close on it).
			s.discovered, s.discoveryErr = true, err
			if i >= 0 {
				s.chosen = i
			}
		})
		switch {
		case i >= 0:
			chosen = i
			return true, nil
		case err != nil:
			logger.Error(err, "Cannot discover an optional API; will retry", "pollInterval", a.cfg.PollInterval)
		case !loggedWaiting:
			// Logged once: this is the normal state of a cluster without
			// the CRD, not an error.
			logger.Info("Optional API is not served; its informer will start once it is",
				"reason", a.describe(), "pollInterval", a.cfg.PollInterval)
			loggedWaiting = true
		}
		return false, nil
	})
	return chosen, err == nil
}

// build creates the candidate's informer, lets Config.Prepare configure it
// and installs the handler that records list and watch errors. A refusal,
// or a synced version no longer served, marks the cache unusable and tells
// run why the informer must stop.
func (a *API) build(c Candidate, run *informerRun) (cache.SharedIndexInformer, error) {
	lw := &listWatch{ListWatch: c.ListWatch(), watchList: a.cfg.WatchList, transform: a.cfg.Transform,
		stream: c.ListStream, newObject: newObjectLike(c.Object)}
	indexers := cache.Indexers{} // not nil: Prepare may add more
	maps.Copy(indexers, a.cfg.Indexers)
	inf := cache.NewSharedIndexInformerWithOptions(lw, c.Object, cache.SharedIndexInformerOptions{
		ResyncPeriod: a.cfg.ResyncPeriod, Indexers: indexers, ObjectDescription: c.String(),
	})
	if a.cfg.Transform != nil {
		if err := inf.SetTransform(a.cfg.Transform); err != nil {
			return nil, err
		}
	}
	if a.cfg.Prepare != nil {
		if err := a.cfg.Prepare(c, inf); err != nil {
			return nil, err
		}
	}
	err := inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		// lw marks the refusals of its list and watch calls with their
		// verb. (An error event of an open watch does not come here: the
		// reflector relists after it, and lw marks that list's refusal.)
		refusedBy := asRefusal(verbWatch, err)
		a.update(func(s *status) {
			s.listErr = err
			switch {
			case refusedBy != nil:
				s.synced, s.refused, run.refused = false, refusedBy, true
				run.stop(refused)
			case s.synced && apierrors.IsNotFound(err):
				s.synced = false
				run.stop(unserved)
			}
		})
		if refusedBy == nil {
			cache.DefaultWatchErrorHandler(ctx, r, err)
		} // else waitUntilAllowed logs it, once
	})
	if err != nil {
		return nil, err
	}
	return inf, nil
}
