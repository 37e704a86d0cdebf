package optionalapi

import (
	"context"
	"maps"

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
// When a synced informer is refused a list or watch (see revokes), Run
// replaces it with a new one, whose cache starts empty and counts as synced
// only once its first list has been applied: the old cache may hold objects
// deleted meanwhile, and a relist into it would be applied a little after
// the list returns, too late to tell when it can be trusted again.
func (a *API) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("api", a.cfg.Name)
	ctx = klog.NewContext(ctx, logger)

	chosen, ok := a.waitUntilServed(ctx)
	if !ok {
		return
	}
	c := a.cfg.Candidates[chosen]
	logger = logger.WithValues("resource", c.String())
	ctx = klog.NewContext(ctx, logger)

	for {
		revoked := make(chan struct{}, 1)
		inf, err := a.build(c, revoked)
		if err != nil {
			a.update(func(s *status) { s.chosen, s.prepareErr = chosen, err })
			logger.Error(err, "Cannot start the informer of an optional API")
			return
		}
		a.mu.Lock()
		a.status.chosen, a.informer = chosen, inf
		a.mu.Unlock()
		if !a.runInformer(ctx, inf, c, revoked) {
			return
		}
		logger.Info("Replacing the informer of an optional API: the API server refused it after it synced", "reason", a.describe())
	}
}

// runInformer runs inf until ctx is done (false) or the API server refuses
// it after it synced (true).
func (a *API) runInformer(ctx context.Context, inf cache.SharedIndexInformer, c Candidate, revoked <-chan struct{}) bool {
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
		return false
	case <-inf.HasSyncedChecker().Done():
	}
	a.update(func(s *status) { s.synced, s.listErr = true, nil })
	logger.Info("Informer of an optional API synced")
	if a.cfg.OnSynced != nil {
		a.cfg.OnSynced(c)
	}
	select {
	case <-ctx.Done():
		return false
	case <-revoked:
		return true
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
		a.update(func(s *status) { s.discovered, s.discoveryErr = true, err })
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
// and installs the handler that records list and watch errors. An error that
// revokes a synced cache marks it unusable and signals revoked.
func (a *API) build(c Candidate, revoked chan<- struct{}) (cache.SharedIndexInformer, error) {
	lw := &listWatch{ListWatch: c.ListWatch()}
	indexers := cache.Indexers{} // not nil: Prepare may add more
	maps.Copy(indexers, a.cfg.Indexers)
	inf := cache.NewSharedIndexInformerWithOptions(lw, c.Object, cache.SharedIndexInformerOptions{
		ResyncPeriod: a.cfg.ResyncPeriod, Indexers: indexers, ObjectDescription: c.String(),
	})
	if a.cfg.Prepare != nil {
		if err := a.cfg.Prepare(c, inf); err != nil {
			return nil, err
		}
	}
	err := inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		a.update(func(s *status) {
			s.listErr = err
			if s.synced && revokes(err) {
				s.synced = false
				select {
				case revoked <- struct{}{}:
				default:
				}
			}
		})
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
	if err != nil {
		return nil, err
	}
	return inf, nil
}

// listWatch is the candidate's ListWatch. It opts out of client-go's
// watch-list streaming, which clients without it (such as the fake
// clientsets of tests) would wait on forever.
type listWatch struct {
	*cache.ListWatch
}

// IsWatchListSemanticsUnSupported tells client-go's reflector to list.
func (lw *listWatch) IsWatchListSemanticsUnSupported() bool { return true }
