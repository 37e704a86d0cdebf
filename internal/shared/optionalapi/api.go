package optionalapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// DefaultPollInterval is how often Run re-checks discovery while no candidate
// is served, when Config.PollInterval is zero.
const DefaultPollInterval = 10 * time.Second

// DefaultRetryRefusedMax is the longest wait between two checks of a refused
// API, when Config.RetryRefusedMax is zero: the permission is checked again
// every five minutes once the backoff has grown.
const DefaultRetryRefusedMax = 5 * time.Minute

// Clock is the part of k8s.io/utils/clock that Run waits with between
// checks of a refused API; clock.RealClock implements it.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) clock.Timer
}

// Candidate is one version of the optional API and how to build its informer.
type Candidate struct {
	// GroupVersion is the API group and version, e.g.
	// gateway.networking.k8s.io/v1.
	GroupVersion schema.GroupVersion
	// Resource is the plural resource name, e.g. "referencegrants".
	Resource string
	// Object is an empty object of the type this version lists, e.g.
	// &gatewayv1.ReferenceGrant{}.
	Object runtime.Object
	// ListWatch returns the calls that list and watch this version in every
	// namespace. API builds the informer around them, and builds a new one
	// when the API server refuses the old one (see API.Run).
	ListWatch func() *cache.ListWatch
	// ListStream, if set, makes the same list as ListWatch but returns the
	// JSON response unread (see StreamLists). With Config.Transform, the
	// informer's lists are then decoded and transformed one object at a
	// time as the response arrives (see listWatch.streamList).
	ListStream func(ctx context.Context, opts metav1.ListOptions) (io.ReadCloser, error)
}

// String names the candidate as group/version/resource, the form used in
// messages.
func (c Candidate) String() string {
	return c.GroupVersion.String() + "/" + c.Resource
}

// NewListWatch builds a Candidate's ListWatch from the List and Watch
// methods of a typed client, e.g.
// NewListWatch(grants.List, grants.Watch).
func NewListWatch[L runtime.Object](
	list func(context.Context, metav1.ListOptions) (L, error),
	watch func(context.Context, metav1.ListOptions) (watch.Interface, error),
) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return list(ctx, opts)
		},
		WatchFuncWithContext: watch,
	}
}

// groupResource is the resource.group form that RBAC rules and API server
// errors use.
func (c Candidate) groupResource() string {
	return schema.GroupResource{Group: c.GroupVersion.Group, Resource: c.Resource}.String()
}

// Config is what New needs to know about one optional API.
type Config struct {
	// Name is the API's kind as users know it, e.g. "ReferenceGrant"; it is
	// used in messages.
	Name string
	// Discovery finds out which candidate the API server serves.
	Discovery discovery.DiscoveryInterface
	// Candidates are the versions that can be used, most preferred first.
	Candidates []Candidate
	// PollInterval is how often discovery is re-checked while no candidate
	// is served; DefaultPollInterval if zero.
	PollInterval time.Duration
	// ResyncPeriod is the informer's resync period; zero disables resyncs.
	ResyncPeriod time.Duration
	// Indexers are the informer's indexers.
	Indexers cache.Indexers
	// Transform, if set, is the informer's transform (see
	// cache.SharedInformer.SetTransform). It must accept the objects it
	// returned, as it sees them twice: unless the initial list is streamed
	// (WatchList), a list is decoded one object at a time
	// (Candidate.ListStream) or read in pages, each object transformed as
	// it arrives, so that a large first sync never holds every object
	// whole; the informer transforms them again when it stores them.
	Transform cache.TransformFunc
	// Prepare, if set, adds indexers or event handlers to the candidate's
	// informer before it runs. It must not set a watch error
	// handler: API sets its own to report list errors. An error stops Run
	// and is then reported by Informer.
	Prepare func(c Candidate, inf cache.SharedIndexInformer) error
	// OnSynced, if set, is called from Run when the informer has synced,
	// and again each time it becomes usable after a lost watch (see
	// API.Informer), so callers can re-queue work that waited for the API.
	OnSynced func(c Candidate)

	// RetryRefused is how long Run waits before it first checks again
	// whether the API server still refuses a list or watch (see API.Run);
	// each further check waits twice as long, up to RetryRefusedMax.
	// PollInterval if zero.
	RetryRefused time.Duration
	// RetryRefusedMax bounds the wait between two checks of a refused API;
	// DefaultRetryRefusedMax if zero.
	RetryRefusedMax time.Duration
	// WhileRefused says in a few words what the caller does while the
	// API server refuses the informer, e.g. that it reads objects with a
	// GET each; it is logged with the refusal.
	WhileRefused string
	// OnRefused, if set, is called from Run when the API server refuses
	// the informer (once per refusal, not per check), so callers that can
	// read without the informer meanwhile can re-queue work that waited
	// for the API.
	OnRefused func(c Candidate)
	// OnSettled, if set, is called once, from Run or its informer's watch
	// error handler, with the error Informer returns at the first answer
	// (see API.Settled): nil when the informer synced, else why the API
	// cannot be used (not served, refused). Work that waited for the answer
	// while the API was syncing is re-queued from it: OnSynced and
	// OnRefused do not cover an API found unserved.
	OnSettled func(err error)
	// Clock times the waits between checks of a refused API; the real
	// clock if nil.
	Clock Clock
	// WatchList lets the informer stream its initial list (client-go's
	// watch-list, where the API server supports it) instead of listing:
	// objects are then transformed one by one as they arrive, rather than
	// all held as listed until the list is complete, which bounds the
	// memory a large first sync takes. Leave it off with clients that
	// cannot stream, such as the fake clientsets of tests, which would
	// never sync.
	WatchList bool
}

// API runs the informer of an optional API once the API server serves it and
// reports why it cannot be used until then. It is safe for concurrent use.
type API struct {
	cfg Config

	mu       sync.RWMutex
	status   status
	informer cache.SharedIndexInformer

	// settled is closed by the first status change that is an answer (see
	// Settled); settle closes it once.
	settled chan struct{}
	settle  sync.Once
}

// New returns an API for cfg. Nothing happens until Run is called.
func New(cfg Config) *API {
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.RetryRefused <= 0 {
		cfg.RetryRefused = cfg.PollInterval
	}
	if cfg.RetryRefusedMax <= 0 {
		cfg.RetryRefusedMax = DefaultRetryRefusedMax
	}
	cfg.RetryRefusedMax = max(cfg.RetryRefusedMax, cfg.RetryRefused)
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &API{cfg: cfg, status: status{chosen: -1}, settled: make(chan struct{})}
}

// Settled is closed once Run has a first answer on the API: its informer
// synced, or it is not served, refused, or cannot be discovered or prepared.
// A caller that must not act on ErrNotSynced while the answer is moments
// away (a process starting) waits for it; it is never reopened.
func (a *API) Settled() <-chan struct{} { return a.settled }

// Informer returns the synced informer and the candidate it serves. Until the
// informer has synced, it returns an error that says in plain words why the
// API cannot be used yet: not served (ErrNotServed), not allowed
// (ErrForbidden) or not synced yet (ErrNotSynced).
//
// A synced cache stops being usable when the API server refuses to list or
// watch it (forbidden or unauthorized), or its watch ends and the version is
// no longer served: the informer would serve its last copy for as long as
// the refusal lasts, and a decision read from it could allow what its owner
// has since withdrawn. Informer then returns the refusal until a new
// informer has listed and synced (see Run). While it returns ErrForbidden,
// the informer is stopped: a caller allowed to GET may read objects
// directly meanwhile. Other errors (a connection lost while the API server
// restarts) leave the cache usable: the reflector relists on its own.
func (a *API) Informer() (cache.SharedIndexInformer, Candidate, error) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if err := a.status.err(a.cfg.Name, a.cfg.Candidates); err != nil {
		return nil, Candidate{}, err
	}
	return a.informer, a.cfg.Candidates[a.status.chosen], nil
}

// update changes the status under the lock.
func (a *API) update(change func(s *status)) {
	a.mu.Lock()
	change(&a.status)
	err := a.status.err(a.cfg.Name, a.cfg.Candidates)
	a.mu.Unlock()
	if !errors.Is(err, ErrNotSynced) {
		a.settle.Do(func() {
			close(a.settled)
			if a.cfg.OnSettled != nil {
				a.cfg.OnSettled(err)
			}
		})
	}
}

// err returns why the API cannot be used, nil when it can.
func (a *API) err() error {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.status.err(a.cfg.Name, a.cfg.Candidates)
}

// Status reports the API's name and state, for gauges read at each scrape.
func (a *API) Status() Status { return Status{Name: a.cfg.Name, State: stateOf(a.err())} }

// describe returns the current error for logging.
func (a *API) describe() string {
	if err := a.err(); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%s API is available", a.cfg.Name)
}
