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

// readBody reads r, a body of declared bytes (-1: not declared; the
// reader holds it to the body limit), into a buffer whose capacity is taken
// from the bytes in flight as it grows: it starts small and doubles as the
// body arrives, up to the declared size, so a caller that declares a large
// body and sends little holds little, and what it holds is counted.
// release gives the capacity back. A nil limiter limits nothing.
func (l *limiter) readBody(r io.Reader, declared int64) (body []byte, release func(), err error) {
	var held int64
	release = func() {
		if l != nil {
			l.bytes.Release(held)
		}
	}
	grow := func(size int64) bool {
		if l != nil && !l.bytes.TryAcquire(size-held) {
			return false
		}
		held = size
		return true
	}
	size := int64(firstRead)
	if declared >= 0 {
		size = min(size, declared+1) // +1: the read that finds the end
	}
	if !grow(size) {
		return nil, release, errOverloaded
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			next := 2 * int64(cap(buf))
			if declared >= 0 {
				next = min(next, max(declared+1, int64(cap(buf))+1))
			}
			if !grow(next) {
				return nil, release, errOverloaded
			}
			buf = append(make([]byte, 0, next), buf...)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, release, nil
		}
		if err != nil {
			return nil, release, err
		}
	}
}

// firstRead is the buffer a body is first read into: most reviews of
// snapshot objects fit.
const firstRead = 16 << 10

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
