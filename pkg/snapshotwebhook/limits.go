package snapshotwebhook

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"

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
	// the requests in flight together, each counted as its bytes arrive
	// (a caller that declares a body and sends none holds nothing).
	MaxBodyBytesInFlight int64
	// MaxConnections is --max-connections: the connections open at once;
	// one more is closed as soon as it is accepted. A connection holds
	// memory before its request is read (its headers, TLS buffers), which
	// the other limits do not see.
	MaxConnections int
}

// DefaultLimits are the flags' defaults. An update's review carries the
// object and the stored one: etcd stores objects up to 1.5 MiB (its
// default --max-request-bytes), so 4 MiB holds any update of a storable
// object with the request's metadata (kube-apiserver refuses bodies over
// 3 MiB, and etcd the objects over 1.5 MiB, whatever the webhook says).
// Snapshot objects are a few KiB: 6 MiB in flight leaves room for a
// thousand of them beside the largest.
func DefaultLimits() Limits {
	return Limits{MaxInFlight: 128, MaxBodyBytes: 4 << 20, MaxBodyBytesInFlight: 6 << 20, MaxConnections: 512}
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
	// connectionOverhead is what an open connection holds before its
	// request is read: headers of up to maxHeaderBytes (and the 4 KiB
	// net/http reads past them), TLS and bufio buffers (74 KiB measured
	// with stalled headers).
	connectionOverhead = 80 << 10
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
	return baseMemory + int64(l.MaxInFlight)*requestOverhead + requestMemoryFactor*l.MaxBodyBytesInFlight +
		int64(l.MaxConnections)*connectionOverhead
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
	if l.MaxConnections < 1 {
		errs = append(errs, errors.New("--max-connections must be at least 1"))
	}
	if l.MaxBodyBytesInFlight < l.MaxBodyBytes {
		errs = append(errs, errors.New("--max-request-bytes-in-flight must be at least --max-request-bytes, or the largest requests could never be served"))
	}
	return errs
}

// limiter holds requests to Limits with two semaphores, one counting the
// bytes of bodies as they arrive, the other the requests being decided
// (taken once the body is in). It never queues: a request over a limit is
// refused at once, as a webhook that answers late answers after
// kube-apiserver's timeoutSeconds (2 s in deploy/). A caller that opens
// requests and stalls holds no slot and only the bytes it sent, until the
// server's read timeout ends the request.
type limiter struct {
	requests, bytes *semaphore.Weighted
}

func newLimiter(l Limits) *limiter {
	return &limiter{requests: semaphore.NewWeighted(int64(l.MaxInFlight)), bytes: semaphore.NewWeighted(l.MaxBodyBytesInFlight)}
}

// errOverloaded says that a limit in flight was reached.
var errOverloaded = errors.New("too many admission requests in flight")

// body wraps r's body so that its bytes are counted against the limit as
// they are read; release gives them back. A nil limiter limits nothing.
func (l *limiter) body(r io.Reader) (counted io.Reader, release func()) {
	if l == nil {
		return r, func() {}
	}
	c := &countedBody{r: r, sem: l.bytes}
	return c, func() { l.bytes.Release(c.held) }
}

// slot takes a request's place among those being decided; false when
// they are all taken. A nil limiter limits nothing.
func (l *limiter) slot() (release func(), ok bool) {
	if l == nil {
		return func() {}, true
	}
	if !l.requests.TryAcquire(1) {
		return nil, false
	}
	return func() { l.requests.Release(1) }, true
}

// countedBody takes each read's bytes from sem, failing with errOverloaded
// once they would go past it.
type countedBody struct {
	r    io.Reader
	sem  *semaphore.Weighted
	held int64
}

func (c *countedBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		if !c.sem.TryAcquire(int64(n)) {
			return 0, errOverloaded
		}
		c.held += int64(n)
	}
	return n, err
}

// cappedListener closes the connections it accepts beyond max open at
// once, so that idle or stalled connections cannot hold memory without
// bound; the closed one's client gets a reset, as from a full server.
type cappedListener struct {
	net.Listener
	open atomic.Int64
	max  int64
}

func (l *cappedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			_ = c.Close()
			continue
		}
		return &cappedConn{Conn: c, l: l}, nil
	}
}

// cappedConn gives its place back when it is closed, once.
type cappedConn struct {
	net.Conn
	l    *cappedListener
	once sync.Once
}

func (c *cappedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}

// NewHandler returns a Handler that decides with admitter, counts in
// metrics (none when nil) and holds requests to limits.
func NewHandler(admitter *Admitter, metrics *Metrics, limits Limits) *Handler {
	return &Handler{Admitter: admitter, Metrics: metrics, limits: newLimiter(limits), maxBody: limits.MaxBodyBytes}
}
