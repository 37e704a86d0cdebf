package optionalapi

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"
)

// DefaultPollInterval is how often Run re-checks discovery while no candidate
// is served, when Config.PollInterval is zero.
const DefaultPollInterval = 10 * time.Second

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
	// Prepare, if set, adds indexers, event handlers or a transform to the
	// candidate's informer before it runs. It must not set a watch error
	// handler: API sets its own to report list errors. An error stops Run
	// and is then reported by Informer.
	Prepare func(c Candidate, inf cache.SharedIndexInformer) error
	// OnSynced, if set, is called from Run when the informer has synced,
	// and again each time it becomes usable after a lost watch (see
	// API.Informer), so callers can re-queue work that waited for the API.
	OnSynced func(c Candidate)
}

// API runs the informer of an optional API once the API server serves it and
// reports why it cannot be used until then. It is safe for concurrent use.
type API struct {
	cfg Config

	mu       sync.RWMutex
	status   status
	informer cache.SharedIndexInformer
}

// New returns an API for cfg. Nothing happens until Run is called.
func New(cfg Config) *API {
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	return &API{cfg: cfg, status: status{chosen: -1}}
}

// Informer returns the synced informer and the candidate it serves. Until the
// informer has synced, it returns an error that says in plain words why the
// API cannot be used yet: not served (ErrNotServed), not allowed
// (ErrForbidden) or not synced yet (ErrNotSynced).
//
// A synced cache stops being usable when its watch ends and the API server
// refuses to list again (forbidden, unauthorized, or the version is no
// longer served): the informer would serve its last copy for as long as the
// refusal lasts, and a decision read from it could allow what its owner has
// since withdrawn. Informer then returns the refusal until a new informer
// has listed and synced (see Run). Other errors (a connection lost while
// the API server restarts) leave the cache usable: the reflector relists on
// its own.
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
	defer a.mu.Unlock()
	change(&a.status)
}

// describe returns the current error for logging.
func (a *API) describe() string {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if err := a.status.err(a.cfg.Name, a.cfg.Candidates); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%s API is available", a.cfg.Name)
}
