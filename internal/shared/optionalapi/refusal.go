package optionalapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// When the API server refuses an informer's list or watch (RBAC forbids the
// verb, or the credentials are refused), retrying it in a loop would cost a
// LIST of every object each time the list is allowed and the watch is not:
// the upstream csi-provisioner's RBAC grants get and list on
// VolumeSnapshotContents, not watch, because upstream GETs each content.
// So a refused informer is stopped, and Run asks the API server again with
// a cheap probe (a list of one object and a watch closed at once), first
// after Config.RetryRefused, then twice as long each time up to
// Config.RetryRefusedMax, and starts a new informer only once the probe is
// allowed. Meanwhile Informer reports ErrForbidden, and callers that may
// GET read objects directly.

// Verbs of the requests an informer makes, as RBAC names them.
const (
	verbList  = "list"
	verbWatch = "watch"
)

// refusal is a list or watch the API server refused: forbidden (an RBAC
// rule is missing) or unauthorized (the credentials are not accepted).
type refusal struct {
	verb string
	err  error
}

func (r *refusal) Error() string { return fmt.Sprintf("%s refused: %v", r.verb, r.err) }

func (r *refusal) Unwrap() error { return r.err }

// asRefusal returns err as a refusal of verb when the API server refused the
// request, and nil for any other error. An error that already wraps a
// refusal keeps that refusal's verb.
func asRefusal(verb string, err error) *refusal {
	var r *refusal
	if errors.As(err, &r) {
		return r
	}
	if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
		return &refusal{verb: verb, err: err}
	}
	return nil
}

// explain says what is missing for candidate c, in the words Informer
// returns. A refused watch (list allowed) needs only watch; a refused list
// needs what the informer and direct reads use.
func (r *refusal) explain(c Candidate) error {
	if apierrors.IsUnauthorized(r.err) {
		return fmt.Errorf("cannot %s %s: %w: the API server does not accept this sidecar's credentials (%w)",
			r.verb, c, ErrForbidden, r.err)
	}
	verbs := "get, list and watch"
	if r.verb == verbWatch {
		verbs = verbWatch
	}
	return fmt.Errorf("cannot %s %s: %w: grant %s on %s to this sidecar's ServiceAccount (%w)",
		r.verb, c, ErrForbidden, verbs, c.groupResource(), r.err)
}

// listWatch is the candidate's ListWatch as an informer uses it. Unless
// Config.WatchList is set, it opts out of client-go's watch-list streaming,
// which clients without it (such as the fake clientsets of tests) would
// wait on forever. It marks the API server's refusals with their verb.
// After the first refusal it sends nothing more: Run stops the informer,
// and the reflector must not relist in the meantime.
type listWatch struct {
	*cache.ListWatch
	watchList bool
	// transform, if set, is the informer's: lists are then read as a
	// stream (with stream) or in pages, each object transformed as it
	// arrives (see streamList and listPages); newObject makes the objects
	// a stream is decoded into.
	transform cache.TransformFunc
	stream    func(context.Context, metav1.ListOptions) (io.ReadCloser, error)
	newObject func() runtime.Object
	refused   atomic.Pointer[refusal]
	// streamRefused is a refused watch-list stream, kept until the list the
	// reflector falls back to answers: a list that fails otherwise (e.g.
	// throttled) must not leave the refusal unnoticed, and a cache serving
	// data it may no longer read.
	streamRefused atomic.Pointer[refusal]
	// cuts counts the watch-list streams in a row that ended before the
	// bookmark closing their initial events (see streamRetryDelay).
	cuts atomic.Int32
}

// IsWatchListSemanticsUnSupported tells client-go's reflector to list
// unless Config.WatchList is set.
func (lw *listWatch) IsWatchListSemanticsUnSupported() bool { return !lw.watchList }

// ListWithContext lists unless a request was refused before.
func (lw *listWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	if r := lw.refused.Load(); r != nil {
		return nil, r
	}
	var obj runtime.Object
	var err error
	switch {
	case lw.transform != nil && lw.stream != nil:
		obj, err = lw.streamList(ctx, opts)
	case lw.transform != nil:
		obj, err = lw.listPages(ctx, opts)
	default:
		obj, err = lw.ListWatch.ListWithContext(ctx, opts)
	}
	stream := lw.streamRefused.Swap(nil)
	if err != nil && stream != nil && asRefusal(verbList, err) == nil {
		// The stream was refused and the list failed for another reason:
		// whether list is allowed is still unknown, so the stream's refusal
		// stands, asking for every verb.
		err = stream
	}
	return obj, lw.check(verbList, err)
}

// WatchWithContext watches unless a request was refused before.
func (lw *listWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if r := lw.refused.Load(); r != nil {
		return nil, r
	}
	stream := ptr.Deref(opts.SendInitialEvents, false)
	if n := lw.cuts.Load(); stream && n > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(streamRetryDelay(n)):
		}
	}
	w, err := lw.ListWatch.WatchWithContext(ctx, opts)
	if stream && err == nil {
		return lw.follow(w), nil
	}
	if r := asRefusal(verbList, err); r != nil && stream {
		// A refused watch-list stream says nothing about whether list is
		// allowed: the reflector falls back to a list, whose answer (and
		// then its watch's) tells which verb is missing. With upstream's
		// RBAC (list, no watch, on contents) that is the one list upstream
		// would make too, and the refusal then asks for watch alone.
		lw.streamRefused.Store(r)
		return nil, err
	}
	return w, lw.check(verbWatch, err)
}

// streamRetryDelay is the wait before the next watch-list stream after n
// streams in a row ended before their initial events did (a connection cut
// mid-stream: client-go then closes the stream without an error, and its
// reflector asks again at once, kubernetes/kubernetes#140890). Each stream
// is a read of every object, as costly as a list, so the streams are
// spaced as the reflector spaces failed lists: 0.8 s, doubling, at most
// 30 s.
func streamRetryDelay(n int32) time.Duration {
	const first, limit = 800 * time.Millisecond, 30 * time.Second
	d := first
	for i := int32(1); i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// follow passes on the events of the watch-list stream w and counts it as
// cut when it ends before the bookmark that closes its initial events
// (and not because the informer stopped it); a stream that gets there
// resets the count.
func (lw *listWatch) follow(w watch.Interface) watch.Interface {
	s := &followedStream{Interface: w, out: make(chan watch.Event), stopped: make(chan struct{})}
	go func() {
		defer close(s.out)
		ended := false
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					if !ended {
						lw.cuts.Add(1)
					}
					return
				}
				if !ended && ev.Type == watch.Bookmark && endsInitialEvents(ev.Object) {
					ended = true
					lw.cuts.Store(0)
				}
				select {
				case s.out <- ev:
				case <-s.stopped:
					return
				}
			case <-s.stopped:
				return
			}
		}
	}()
	return s
}

// endsInitialEvents reports whether a bookmark closes a watch-list stream's
// initial events.
func endsInitialEvents(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}

// followedStream is a watch-list stream whose events follow passes on.
type followedStream struct {
	watch.Interface
	out      chan watch.Event
	stopped  chan struct{}
	stopOnce sync.Once
}

func (s *followedStream) ResultChan() <-chan watch.Event { return s.out }

// Stop stops the stream; its end is then no cut.
func (s *followedStream) Stop() {
	s.stopOnce.Do(func() { close(s.stopped) })
	s.Interface.Stop()
}

// check records and returns err as a refusal when it is one, and returns
// it unchanged otherwise.
func (lw *listWatch) check(verb string, err error) error {
	r := asRefusal(verb, err)
	if r == nil {
		return err
	}
	lw.refused.CompareAndSwap(nil, r)
	return r
}

// probe asks the API server whether an informer of lw would be allowed now,
// as cheaply as it can: a list of at most one object, then a watch from
// that list's resourceVersion, stopped at once. It returns the refusal, or
// nil when both were allowed or failed otherwise (the informer's reflector
// handles other errors).
func probe(ctx context.Context, lw *cache.ListWatch) *refusal {
	list, err := lw.ListWithContext(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return asRefusal(verbList, err)
	}
	opts := metav1.ListOptions{TimeoutSeconds: ptr.To[int64](1)}
	if m, err := meta.ListAccessor(list); err == nil {
		opts.ResourceVersion = m.GetResourceVersion()
	}
	w, err := lw.WatchWithContext(ctx, opts)
	if err != nil {
		return asRefusal(verbWatch, err)
	}
	w.Stop()
	return nil
}

// newRetryBackoff returns the waits between checks of a refused API:
// Config.RetryRefused, doubled each time, at most Config.RetryRefusedMax.
func (a *API) newRetryBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: a.cfg.RetryRefused, Factor: 2, Steps: math.MaxInt32, Cap: a.cfg.RetryRefusedMax}
}

// waitUntilAllowed waits, with retry's backoff, until a probe finds the
// candidate's list and watch allowed; it returns false if ctx ends first.
// The refusal is logged once, as an error that names the missing
// permission, and the checks that find it still refused at V(2).
func (a *API) waitUntilAllowed(ctx context.Context, c Candidate, retry *wait.Backoff) bool {
	logger := klog.FromContext(ctx)
	delay := retry.Step()
	keys := []any{"retryIn", delay}
	if a.cfg.WhileRefused != "" {
		keys = append(keys, "meanwhile", a.cfg.WhileRefused)
	}
	logger.Error(a.err(), "The API server refuses the informer of an optional API; it is stopped, and the permission is checked again with a growing interval", keys...)
	if a.cfg.OnRefused != nil {
		a.cfg.OnRefused(c)
	}
	for {
		if !a.sleep(ctx, delay) {
			return false
		}
		r := probe(ctx, c.ListWatch())
		if r == nil {
			logger.Info("The API server allows the informer of an optional API again; starting it")
			return true
		}
		a.update(func(s *status) { s.refused = r })
		delay = retry.Step()
		logger.V(2).Info("The API server still refuses the informer of an optional API", "reason", a.describe(), "retryIn", delay)
	}
}

// sleep waits d on the configured clock; false if ctx ended first.
func (a *API) sleep(ctx context.Context, d time.Duration) bool {
	t := a.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}
