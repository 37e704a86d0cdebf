package snapshotwebhook

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// On SIGTERM (Serve's context ends) the webhook keeps accepting and
// answering for --shutdown-delay-duration, reports not ready on /readyz,
// and closes each connection after its response, so that kube-apiserver's
// next call opens one to a replica that stays (issue 22, defect 10). Then
// it stops accepting and finishes the requests in flight.
func TestServerDrainsBeforeItStops(t *testing.T) {
	drainAsked, drainEnds := make(chan time.Duration, 1), make(chan time.Time)
	arrived := make(chan struct{}, 1)
	ready := &Readiness{}
	w := startWebhook(t, func(c *ServerConfig) {
		c.ShutdownDelay, c.Readiness = 30*time.Second, ready
		c.after = func(d time.Duration) <-chan time.Time {
			drainAsked <- d
			return drainEnds
		}
		c.Handler = signalArrivals(c.Handler, arrived)
	})
	body := allowedReview(t)
	kept := w.client(true)
	if resp := postOK(t, w, kept, body); resp.Close {
		t.Errorf("before SIGTERM the connection was closed after the response, want it kept alive")
	}
	held := holdOnServer(t, w, body)
	<-arrived

	w.stop() // SIGTERM
	select {
	case d := <-drainAsked:
		if d != 30*time.Second {
			t.Errorf("drained for %v, want --shutdown-delay-duration's 30s", d)
		}
	case <-w.stopped:
		t.Fatalf("stopped at once on SIGTERM (%v), want a drain of 30s", w.served)
	case <-time.After(5 * time.Second):
		t.Fatal("no drain within 5 s of SIGTERM")
	}
	rec := httptest.NewRecorder()
	ready.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/readyz while draining: %d, want 503", rec.Code)
	}
	for name, client := range map[string]*http.Client{"a connection kept alive": kept, "a new connection": w.client(true)} {
		if resp := postOK(t, w, client, body); !resp.Close {
			t.Errorf("%s while draining: answered with the connection kept alive, want Connection: close", name)
		}
	}

	close(drainEnds)
	if !eventually(func() bool { return refused(w) }) {
		t.Error("still accepting connections after the drain")
	}
	select {
	case <-w.stopped:
		t.Fatal("stopped before the request in flight was answered")
	default:
	}
	if code := held.release(t); code != http.StatusOK {
		t.Errorf("the request in flight at the end of the drain: %d, want 200", code)
	}
	select {
	case <-w.stopped:
		if w.served != nil {
			t.Errorf("Serve: %v", w.served)
		}
	case <-time.After(5 * time.Second):
		t.Error("still serving 5 s after the last request in flight was answered")
	}
}

// signalArrivals sends to arrived when a request with the header X-Hold
// reaches next.
func signalArrivals(next http.Handler, arrived chan<- struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Hold") != "" {
			arrived <- struct{}{}
		}
		next.ServeHTTP(w, r)
	})
}

// postOK posts body with client, failing t unless it is allowed.
func postOK(t *testing.T, w *webhook, client *http.Client, body []byte) *http.Response {
	t.Helper()
	resp, review, _, err := w.post(client, "application/json", body)
	if err != nil || review == nil || !review.Response.Allowed {
		t.Fatalf("post: %v %+v", err, resp)
	}
	return resp
}

// refused reports whether a new connection to w is refused.
func refused(w *webhook) bool {
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(strings.TrimSuffix(w.url, snapshotPath), "https://"), time.Second)
	if err != nil {
		return true
	}
	conn.Close()
	return false
}

// serverHold is a request sent to the server, with the header X-Hold,
// whose body comes on release.
type serverHold struct {
	body *lateBody
	code chan int
}

func holdOnServer(t *testing.T, w *webhook, body []byte) *serverHold {
	t.Helper()
	late := newLateBody(body)
	req, err := http.NewRequest(http.MethodPost, w.url, late.reader)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Hold", "yes")
	h := &serverHold{body: late, code: make(chan int, 1)}
	go func() {
		resp, err := w.client(false).Do(req)
		if err != nil {
			h.code <- 0
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		h.code <- resp.StatusCode
	}()
	return h
}

// release sends the body and returns the status answered (0 for none).
func (h *serverHold) release(t *testing.T) int {
	t.Helper()
	h.body.send()
	return answer(t, h.code)
}

// --shutdown-delay-duration is 0 unless set (kube-apiserver's flag of that
// name too): a webhook run from upstream's manifests, which have no
// preStop delay, stops as it did. StopTimeout adds the wait for the
// requests in flight.
func TestShutdownDelayFlag(t *testing.T) {
	certs := []string{"--tls-cert-file=c", "--tls-private-key-file=k"}
	opts, err := parse(certs, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if opts.ShutdownDelay != 0 || opts.StopTimeout() != shutdownTimeout {
		t.Errorf("default: delay %v, stop timeout %v; want 0, %v", opts.ShutdownDelay, opts.StopTimeout(), shutdownTimeout)
	}
	if opts, err = parse(append(certs, "--shutdown-delay-duration=15s"), io.Discard); err != nil {
		t.Fatal(err)
	}
	if opts.StopTimeout() != 15*time.Second+shutdownTimeout {
		t.Errorf("--shutdown-delay-duration=15s: stop timeout %v, want %v", opts.StopTimeout(), 15*time.Second+shutdownTimeout)
	}
	if _, err := parse(append(certs, "--shutdown-delay-duration=-1s"), io.Discard); err == nil || !strings.Contains(err.Error(), "--shutdown-delay-duration") {
		t.Errorf("a negative delay: %v, want an error", err)
	}
}
