package optionalapi

import (
	"context"
	"maps"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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

	inf, err := a.build(c)
	if err != nil {
		a.update(func(s *status) { s.chosen, s.prepareErr = chosen, err })
		logger.Error(err, "Cannot start the informer of an optional API")
		return
	}
	a.mu.Lock()
	a.status.chosen, a.informer = chosen, inf
	a.mu.Unlock()

	logger.Info("Starting the informer of an optional API")
	informerDone := make(chan struct{})
	go func() {
		defer close(informerDone)
		inf.RunWithContext(ctx)
	}()
	defer func() { <-informerDone }()

	select {
	case <-ctx.Done():
		return
	case <-inf.HasSyncedChecker().Done():
	}
	a.update(func(s *status) { s.synced = true })
	logger.Info("Informer of an optional API synced")
	if a.cfg.OnSynced != nil {
		a.cfg.OnSynced(c)
	}
	<-ctx.Done()
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
// and installs the handler that records list and watch errors.
func (a *API) build(c Candidate) (cache.SharedIndexInformer, error) {
	lw := &listWatch{ListWatch: c.ListWatch(), listed: a.listed}
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
		a.update(func(s *status) { s.listErr = err })
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
	if err != nil {
		return nil, err
	}
	return inf, nil
}

// listed records a complete, successful list: the cache holds the API
// server's current state again. If the cache had been refused after it
// synced, it is usable again, and OnSynced says so.
func (a *API) listed() {
	a.mu.Lock()
	recovered := a.status.synced && revokes(a.status.listErr)
	a.status.listErr = nil
	chosen := a.status.chosen
	a.mu.Unlock()
	if recovered {
		klog.Background().Info("Informer of an optional API can be used again: it listed successfully", "api", a.cfg.Name)
		if a.cfg.OnSynced != nil {
			a.cfg.OnSynced(a.cfg.Candidates[chosen])
		}
	}
}

// listWatch is the candidate's ListWatch, reporting every complete list to
// listed. It opts out of client-go's watch-list streaming, in which the
// initial state arrives through a watch and no list call would tell that
// the cache is current again.
type listWatch struct {
	*cache.ListWatch
	listed func()
}

// ListWithContext lists one page and calls listed after the last one.
func (lw *listWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	obj, err := lw.ListWatch.ListWithContext(ctx, opts)
	if err != nil {
		return obj, err
	}
	if list, lerr := meta.ListAccessor(obj); lerr == nil && list.GetContinue() == "" {
		lw.listed()
	}
	return obj, nil
}

// List is ListWithContext for callers without a context.
func (lw *listWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

// IsWatchListSemanticsUnSupported tells client-go's reflector to list.
func (lw *listWatch) IsWatchListSemanticsUnSupported() bool { return true }
