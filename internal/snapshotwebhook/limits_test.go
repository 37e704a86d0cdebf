package snapshotwebhook

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/client-go/tools/cache"
)

// A burst of requests being decided gets 429 for every one over
// --max-requests-in-flight at once, counted as an error with reason
// overloaded; the requests held are answered, and once they are, new ones
// are served again. (A request takes its place once its body is in: the
// two held here are being decided, by a DELETE guard whose caches block.)
func TestRequestsOverTheInFlightLimitAreRefusedAtOnce(t *testing.T) {
	deciding, decide := make(chan struct{}, 10), make(chan struct{})
	guard := guardOf(t, granted, nil, true, nil)
	guard.Synced = []cache.InformerSynced{func() bool {
		deciding <- struct{}{}
		<-decide
		return true
	}}
	metrics, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(&Admitter{DeleteGuard: guard}, metrics, Limits{MaxInFlight: 2, MaxBodyBytes: 1 << 20, MaxBodyBytesInFlight: 8 << 20})
	deletion := reviewOf(t, request(t, admissionv1.Delete, snapshotsGVR, nil, snapshot(fromClaim("data"))))
	answered := make(chan *httptest.ResponseRecorder, 2)
	for range 2 {
		go func() { answered <- serve(t, h, deletion, int64(len(deletion))) }()
		answer(t, deciding)
	}
	if rec := serve(t, h, allowedReview(t), -1); rec.Code != http.StatusTooManyRequests {
		t.Errorf("a third request with two being decided: %d %s, want 429", rec.Code, rec.Body)
	}
	if n := errorsCounted(metrics, errorOverloaded); n != 1 {
		t.Errorf("overloaded errors counted %v times, want 1", n)
	}
	close(decide)
	for range 2 {
		if rec := answer(t, answered); rec.Code != http.StatusOK {
			t.Errorf("a request being decided: %d %s, want 200", rec.Code, rec.Body)
		}
	}
	if rec := serve(t, h, allowedReview(t), -1); rec.Code != http.StatusOK {
		t.Errorf("a request once those in flight are answered: %d %s, want 200", rec.Code, rec.Body)
	}
}

// The bodies in flight are bounded together by
// --max-request-bytes-in-flight, each counted as its bytes arrive: a large
// body mostly received leaves room for small ones but not for another
// large one, and a body declared but not sent holds nothing (a caller
// that opens requests and stalls cannot starve kube-apiserver's).
func TestBodiesInFlightAreBoundedTogether(t *testing.T) {
	h, metrics := limitedHandler(t, Limits{MaxInFlight: 10, MaxBodyBytes: 64 << 10, MaxBodyBytesInFlight: 100 << 10})
	large, small := padded(allowedReview(t), 60<<10), allowedReview(t)
	stalled := holdSent(t, h, large, int64(len(large)), 0)
	held := holdSent(t, h, large, int64(len(large)), len(large)-1)
	for name, tc := range map[string]struct {
		body     []byte
		declared int64
		want     int
	}{
		"a second large body":           {large, int64(len(large)), http.StatusTooManyRequests},
		"a body without Content-Length": {small, -1, http.StatusOK},
		"a small body":                  {small, int64(len(small)), http.StatusOK},
	} {
		if rec := serve(t, h, tc.body, tc.declared); rec.Code != tc.want {
			t.Errorf("%s with a 60 KiB body mostly received: %d %s, want %d", name, rec.Code, rec.Body, tc.want)
		}
	}
	if n := errorsCounted(metrics, errorOverloaded); n != 1 {
		t.Errorf("overloaded errors counted %v times, want 1", n)
	}
	recovers(t, h, large, held, stalled)
}

// A body over --max-request-bytes is answered 413: at once, unread, when
// its Content-Length says so; once the limit is read otherwise.
func TestBodiesOverTheLimitAreRefused(t *testing.T) {
	h, metrics := limitedHandler(t, Limits{MaxInFlight: 10, MaxBodyBytes: 64 << 10, MaxBodyBytesInFlight: 1 << 20})
	never, _ := io.Pipe() // a body that never comes
	req := httptest.NewRequest(http.MethodPost, snapshotPath, never)
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = 64<<10 + 1
	if rec := serveRequest(t, h, req); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a declared body over the limit: %d %s, want 413", rec.Code, rec.Body)
	}
	if rec := serve(t, h, padded(allowedReview(t), 64<<10+1), -1); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("an undeclared body over the limit: %d %s, want 413", rec.Code, rec.Body)
	}
	if n := errorsCounted(metrics, errorTooLarge); n != 2 {
		t.Errorf("too-large errors counted %v times, want 2", n)
	}
	if rec := serve(t, h, padded(allowedReview(t), 64<<10), -1); rec.Code != http.StatusOK {
		t.Errorf("a body of the limit: %d %s, want 200", rec.Code, rec.Body)
	}
}

// MemoryBound counts requestMemoryFactor bytes per byte of body in
// flight: no body allocates more while it is answered, including those
// that decode into the most (many map entries or list items of a few bytes
// each, in the objects' metadata or the request's user info), created or
// updated.
func TestRequestMemoryFactor(t *testing.T) {
	const size = 256 << 10
	h := NewHandler(&Admitter{}, nil, Limits{MaxInFlight: 1, MaxBodyBytes: 8 * size, MaxBodyBytesInFlight: 8 * size})
	emptyItems := func(item string) string { return strings.TrimSuffix(strings.Repeat(item+",", size/(len(item)+1)), ",") }
	metadata := map[string]string{
		"labels":           `"labels":{` + entries(size, `"%x":""`) + `}`,
		"annotations":      `"annotations":{` + entries(size, `"%x":""`) + `}`,
		"finalizers":       `"finalizers":[` + entries(size, `"%x"`) + `]`,
		"empty finalizers": `"finalizers":[` + emptyItems(`""`) + `]`,
		"owners":           `"ownerReferences":[` + emptyItems(`{}`) + `]`,
		"managed fields":   `"managedFields":[` + emptyItems(`{}`) + `]`,
		"one value":        `"annotations":{"a":"` + strings.Repeat("x", size) + `"}`,
	}
	bodies := map[string][]byte{}
	for name, m := range metadata {
		object := []byte(`{"apiVersion":"snapshot.storage.k8s.io/v1","kind":"VolumeSnapshot","metadata":{"name":"snap","namespace":"ns",` +
			m + `},"spec":{"source":{"persistentVolumeClaimName":"data"}}}`)
		bodies["created with "+name] = reviewOf(t, request(t, admissionv1.Create, snapshotsGVR, object, nil))
		bodies["updated with "+name] = reviewOf(t, request(t, admissionv1.Update, snapshotsGVR, object, object))
	}
	groups := request(t, admissionv1.Create, snapshotsGVR, snapshot(fromClaim("data")), nil)
	groups.UserInfo.Groups = make([]string, size/3)
	bodies["a user in many groups"] = reviewOf(t, groups)
	for name, body := range bodies {
		allocated := allocatedBy(func() {
			if rec := serve(t, h, body, int64(len(body))); rec.Code != http.StatusOK {
				t.Fatalf("%s: %d %s", name, rec.Code, rec.Body)
			}
		})
		t.Logf("%s: %d KiB body, %d KiB allocated (%.1f per byte)", name, len(body)>>10, allocated>>10, float64(allocated)/float64(len(body)))
		if allocated > requestMemoryFactor*uint64(len(body)) {
			t.Errorf("%s: %d bytes allocated for a %d-byte body, more than requestMemoryFactor (%d) per byte", name, allocated, len(body), requestMemoryFactor)
		}
	}
}

// The defaults bound memory as deploy/webhook's limit allows (see
// test/manifests for the Deployment's own flags), and a body of the
// largest size can be served.
func TestLimitsFlags(t *testing.T) {
	certs := []string{"--tls-cert-file=c", "--tls-private-key-file=k"}
	opts, err := parse(certs, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Limits != DefaultLimits() || opts.EnableHTTP2 || opts.ClientCAFile != "" {
		t.Errorf("defaults: limits %+v, HTTP/2 %v, client CA %q; want %+v, off, none", opts.Limits, opts.EnableHTTP2, opts.ClientCAFile, DefaultLimits())
	}
	opts, err = parse(append(certs, "--max-requests-in-flight=4", "--max-request-bytes=1000", "--max-request-bytes-in-flight=3000",
		"--max-connections=7", "--enable-http2", "--client-ca-file=ca.crt"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Limits{MaxInFlight: 4, MaxBodyBytes: 1000, MaxBodyBytesInFlight: 3000, MaxConnections: 7}); opts.Limits != want || !opts.EnableHTTP2 || opts.ClientCAFile != "ca.crt" {
		t.Errorf("limits %+v, HTTP/2 %v, client CA %q; want %+v, on, ca.crt", opts.Limits, opts.EnableHTTP2, opts.ClientCAFile, want)
	}
	if want := int64(64<<20 + 4*128<<10 + 32*3000 + 7*80<<10); opts.Limits.MemoryBound() != want {
		t.Errorf("MemoryBound() = %d, want %d", opts.Limits.MemoryBound(), want)
	}
	for args, wantErr := range map[string]string{
		"--max-requests-in-flight=0":                                  "--max-requests-in-flight",
		"--max-request-bytes=0":                                       "--max-request-bytes must",
		"--max-request-bytes=2000 --max-request-bytes-in-flight=1000": "--max-request-bytes-in-flight must be at least --max-request-bytes",
	} {
		if _, err := parse(append(certs, strings.Fields(args)...), io.Discard); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("parse(%q) = %v, want an error containing %q", args, err, wantErr)
		}
	}
}

// limitedHandler is a Handler held to limits, allowing valid snapshots,
// with its metrics.
func limitedHandler(t *testing.T, limits Limits) (*Handler, *Metrics) {
	t.Helper()
	metrics, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return NewHandler(&Admitter{}, metrics, limits), metrics
}

// errorsCounted is the count of HTTP errors for reason.
func errorsCounted(metrics *Metrics, reason string) float64 {
	return testutil.ToFloat64(metrics.requests.WithLabelValues(otherResource, "", resultError, reason))
}

// recovers checks that the held requests are answered once their bodies
// come, and that body is served after them.
func recovers(t *testing.T, h http.Handler, body []byte, held ...*heldRequest) {
	t.Helper()
	for _, r := range held {
		if rec := r.release(t); rec.Code != http.StatusOK {
			t.Errorf("a request held in flight: %d %s, want 200", rec.Code, rec.Body)
		}
	}
	if rec := serve(t, h, body, int64(len(body))); rec.Code != http.StatusOK {
		t.Errorf("a request once those in flight are answered: %d %s, want 200", rec.Code, rec.Body)
	}
}

// allowedReview is the review of a valid snapshot's creation.
func allowedReview(t *testing.T) []byte {
	return reviewOf(t, request(t, admissionv1.Create, snapshotsGVR, snapshot(fromClaim("data")), nil))
}

// padded is review padded with white space (valid JSON) to size bytes.
func padded(review []byte, size int) []byte {
	return append(review, bytes.Repeat([]byte(" "), size-len(review))...)
}

// entries is about size bytes of JSON list or map entries, format with
// their number.
func entries(size int, format string) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, format, i)
	}
	return b.String()
}

// allocatedBy is the least that f allocated in three runs (other
// goroutines may allocate meanwhile).
func allocatedBy(f func()) uint64 {
	least := ^uint64(0)
	for range 3 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// serve posts body to h, with Content-Length declared (none when -1),
// and returns the answer.
func serve(t *testing.T, h http.Handler, body []byte, declared int64) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, snapshotPath, io.MultiReader(bytes.NewReader(body)))
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = declared
	return serveRequest(t, h, req)
}

// serveRequest serves req with h, failing t unless it is answered within
// 5 s: a limit must answer at once, not queue.
func serveRequest(t *testing.T, h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(rec, req)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s with Content-Length %d not answered within 5 s", req.URL.Path, req.ContentLength)
	}
	return rec
}

// heldRequest is a request in flight whose body has not come yet.
type heldRequest struct {
	body     *lateBody
	answered chan *httptest.ResponseRecorder
}

// holdSent starts serving a request (its body declared, or -1), sends the
// first sent bytes of its body, and returns once the handler has read
// them; the rest comes on release.
func holdSent(t *testing.T, h http.Handler, body []byte, declared int64, sent int) *heldRequest {
	t.Helper()
	late := newLateBody(body[sent:])
	req := httptest.NewRequest(http.MethodPost, snapshotPath, late.reader)
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = declared
	r := &heldRequest{body: late, answered: make(chan *httptest.ResponseRecorder, 1)}
	go func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		r.answered <- rec
	}()
	// A write returns once read; the handler counts what it read after its
	// read returns, before it reads again: once the second write returns,
	// all but its byte are counted.
	for _, part := range [][]byte{body[:max(sent-1, 0)], body[max(sent-1, 0):sent]} {
		if len(part) > 0 {
			if _, err := late.writer.Write(part); err != nil {
				t.Fatal(err)
			}
		}
	}
	return r
}

// release sends the body and returns the answer.
func (r *heldRequest) release(t *testing.T) *httptest.ResponseRecorder {
	t.Helper()
	r.body.send()
	return answer(t, r.answered)
}

// lateBody is a request body that comes when sent.
type lateBody struct {
	reader *io.PipeReader
	writer *io.PipeWriter
	body   []byte
}

func newLateBody(body []byte) *lateBody {
	reader, writer := io.Pipe()
	return &lateBody{reader: reader, writer: writer, body: body}
}

// send sends the whole body, then its end.
func (b *lateBody) send() {
	go func() {
		_, _ = b.writer.Write(b.body)
		_ = b.writer.Close()
	}()
}

// answer is the answer to a request whose body was sent, failing t
// unless it comes within 5 s.
func answer[T any](t *testing.T, answered <-chan T) T {
	t.Helper()
	select {
	case a := <-answered:
		return a
	case <-time.After(5 * time.Second):
		t.Fatal("a request in flight was not answered within 5 s of its body")
		var none T
		return none
	}
}
