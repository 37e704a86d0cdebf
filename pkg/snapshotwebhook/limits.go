package snapshotwebhook

import (
	"errors"
	"net/http"

	"golang.org/x/sync/semaphore"
)

// Limits bound what the requests in flight may hold, so that a burst or a
// caller that floods the webhook's Service gets fast errors (which
// kube-apiserver handles with the webhook's failurePolicy) instead of
// running the webhook out of memory (issue 22, defect 9). Together they
// bound its memory: see MemoryBound.
type Limits struct {
	// MaxInFlight is --max-requests-in-flight: the admission requests
	// served at once.
	MaxInFlight int
	// MaxBodyBytes is --max-request-bytes: the body of one request.
	MaxBodyBytes int64
	// MaxBodyBytesInFlight is --max-request-bytes-in-flight: the bodies of
	// the requests in flight together, each counted at its Content-Length
	// (at MaxBodyBytes without one).
	MaxBodyBytesInFlight int64
}

// DefaultLimits are the flags' defaults. An update's review carries the
// object and the stored one: etcd stores objects up to 1.5 MiB (its
// default --max-request-bytes), so 4 MiB holds any update of a storable
// object with the request's metadata (kube-apiserver refuses bodies over
// 3 MiB, and etcd the objects over 1.5 MiB, whatever the webhook says).
// Snapshot objects are a few KiB: 6 MiB in flight leaves room for a
// thousand of them beside the largest.
func DefaultLimits() Limits {
	return Limits{MaxInFlight: 128, MaxBodyBytes: 4 << 20, MaxBodyBytesInFlight: 6 << 20}
}

// What MemoryBound counts, measured by TestRequestMemoryFactor.
const (
	// requestMemoryFactor bounds what a request allocates per byte of its
	// body: the body, the review's copies of its objects, and what they
	// decode into. The worst bodies are lists of empty strings
	// (finalizers, the user's groups: 30 bytes per byte) and maps of
	// short entries (annotations: 15); the metadata that would decode
	// into more is skipped (leanMeta: empty managed fields took 195).
	requestMemoryFactor = 32
	// requestOverhead is a request's memory besides its body: its
	// headers (at most maxHeaderBytes), its connection's buffers (TLS
	// records of up to 16 KiB each way, bufio) and goroutine.
	requestOverhead = 128 << 10
	// baseMemory is the webhook's own: the Go runtime, its clients, the
	// class caches and the metrics (TestE2ESnapshotWebhookDrain logs its
	// resident set under load: 46 MiB).
	baseMemory = 64 << 20
)

// MemoryBound is the most memory the webhook needs under these limits,
// in bytes: deploy/webhook's memory limit must be at least this. Idle
// keep-alive connections are not counted (a few KiB each, closed after
// 15 s); nor are the DELETE guard's caches of claims and volumes, which
// grow with the cluster.
func (l Limits) MemoryBound() int64 {
	return baseMemory + int64(l.MaxInFlight)*requestOverhead + requestMemoryFactor*l.MaxBodyBytesInFlight
}

// validate checks the limits' flags.
func (l Limits) validate() []error {
	var errs []error
	if l.MaxInFlight < 1 {
		errs = append(errs, errors.New("--max-requests-in-flight must be at least 1"))
	}
	if l.MaxBodyBytes < 1 {
		errs = append(errs, errors.New("--max-request-bytes must be at least 1"))
	}
	if l.MaxBodyBytesInFlight < l.MaxBodyBytes {
		errs = append(errs, errors.New("--max-request-bytes-in-flight must be at least --max-request-bytes, or the largest requests could never be served"))
	}
	return errs
}

// limiter holds requests to Limits with two semaphores, one counting
// requests, the other the bytes of their bodies. It never queues: a
// request over a limit is refused at once, as a webhook that answers
// late answers after kube-apiserver's timeoutSeconds (2 s in deploy/).
type limiter struct {
	requests, bytes *semaphore.Weighted
	maxBody         int64
}

func newLimiter(l Limits) *limiter {
	return &limiter{requests: semaphore.NewWeighted(int64(l.MaxInFlight)), bytes: semaphore.NewWeighted(l.MaxBodyBytesInFlight), maxBody: l.MaxBodyBytes}
}

// acquire takes r's share of the limits, and reports false when it would
// take them past either. release gives the share back. A nil limiter
// limits nothing.
func (l *limiter) acquire(r *http.Request) (release func(), ok bool) {
	if l == nil {
		return func() {}, true
	}
	size := r.ContentLength
	if size < 0 || size > l.maxBody {
		size = l.maxBody
	}
	if !l.requests.TryAcquire(1) {
		return nil, false
	}
	if !l.bytes.TryAcquire(size) {
		l.requests.Release(1)
		return nil, false
	}
	return func() {
		l.bytes.Release(size)
		l.requests.Release(1)
	}, true
}

// NewHandler returns a Handler that decides with admitter, counts in
// metrics (none when nil) and holds requests to limits.
func NewHandler(admitter *Admitter, metrics *Metrics, limits Limits) *Handler {
	return &Handler{Admitter: admitter, Metrics: metrics, limits: newLimiter(limits), maxBody: limits.MaxBodyBytes}
}
