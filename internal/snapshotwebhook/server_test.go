package snapshotwebhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/xns-csi/csi-provisioner/internal/snapshotwebhook/snapshotvalidation"
	"github.com/xns-csi/csi-provisioner/test/servingcerts"
)

// webhook is a Server run on 127.0.0.1 with certificates from a test CA,
// and a client that trusts that CA.
type webhook struct {
	ca      *servingcerts.CA
	volume  *servingcerts.SecretVolume
	url     string
	metrics *Metrics
	reg     *prometheus.Registry
	// stop ends Serve's context, as SIGTERM does; stopped is closed
	// when Serve has returned served.
	stop    context.CancelFunc
	stopped chan struct{}
	served  error
}

// startWebhook starts the webhook with the ServerConfig that configure
// change.
func startWebhook(t *testing.T, configure ...func(*ServerConfig)) *webhook {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	ca, err := servingcerts.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	w := &webhook{ca: ca, volume: &servingcerts.SecretVolume{Dir: t.TempDir()}, reg: prometheus.NewRegistry()}
	if err := w.volume.WriteIssued(ca, 100); err != nil {
		t.Fatal(err)
	}
	if w.metrics, err = NewMetrics(w.reg); err != nil {
		t.Fatal(err)
	}
	handler := &Handler{Metrics: w.metrics, Admitter: &Admitter{SnapshotClasses: classes(snapshotvalidation.Class{Name: "silver", Driver: "a.csi.io", Default: true})}}
	mux := http.NewServeMux()
	mux.Handle(snapshotPath, handler)
	cfg := ServerConfig{Addr: "127.0.0.1:0", CertFile: w.volume.CertFile(), KeyFile: w.volume.KeyFile(), Handler: mux}
	for _, c := range configure {
		c(&cfg)
	}
	server, err := Listen(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.url = "https://" + server.Addr().String() + snapshotPath
	w.stop, w.stopped = cancel, make(chan struct{})
	go func() {
		w.served = server.Serve(ctx)
		close(w.stopped)
	}()
	t.Cleanup(func() {
		cancel()
		<-w.stopped
		if w.served != nil {
			t.Errorf("Serve: %v", w.served)
		}
	})
	return w
}

// client trusts the test CA; keepAlive false makes every request a new
// TLS handshake.
func (w *webhook) client(keepAlive bool) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: w.ca.Pool, MinVersion: tls.VersionTLS12},
		DisableKeepAlives: !keepAlive,
	}}
}

// post sends body and returns the response, its decoded review (when
// 200) and the serial of the certificate the server presented.
func (w *webhook) post(client *http.Client, contentType string, body []byte) (*http.Response, *admissionv1.AdmissionReview, int64, error) {
	resp, err := client.Post(w.url, contentType, bytes.NewReader(body))
	if err != nil {
		return nil, nil, 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, 0, err
	}
	serial := resp.TLS.PeerCertificates[0].SerialNumber.Int64()
	if resp.StatusCode != http.StatusOK {
		return resp, nil, serial, nil
	}
	review := &admissionv1.AdmissionReview{}
	return resp, review, serial, json.Unmarshal(data, review)
}

func TestServerAnswersAdmissionReviews(t *testing.T) {
	w := startWebhook(t)
	client := w.client(true)
	invalid := request(t, admissionv1.Create, snapshotsGVR, snapshot(), nil)
	_, review, _, err := w.post(client, "application/json", reviewOf(t, invalid))
	if err != nil {
		t.Fatal(err)
	}
	got := review.Response
	if review.APIVersion != "admission.k8s.io/v1" || review.Kind != "AdmissionReview" || review.Request != nil {
		t.Errorf("response review %+v, want an admission.k8s.io/v1 AdmissionReview without the request", review.TypeMeta)
	}
	if got.UID != invalid.UID || got.Allowed || got.Result.Code != http.StatusBadRequest ||
		got.Result.Message != `VolumeSnapshot.snapshot.storage.k8s.io "snap" is invalid: spec.source: Required value: exactly one of persistentVolumeClaimName and volumeSnapshotContentName must be set` {
		t.Errorf("response %+v %+v", got, got.Result)
	}
	valid := request(t, admissionv1.Create, snapshotsGVR, snapshot(fromClaim("data")), nil)
	if _, review, _, err = w.post(client, "application/json; charset=utf-8", reviewOf(t, valid)); err != nil || !review.Response.Allowed || review.Response.UID != valid.UID {
		t.Errorf("valid snapshot: %v %+v", err, review)
	}
	if n := testutil.ToFloat64(w.metrics.requests.WithLabelValues(snapshots, "CREATE", resultDenied, "spec.source")); n != 1 {
		t.Errorf("denied by spec.source counted %v times, want 1", n)
	}
	if n := testutil.ToFloat64(w.metrics.requests.WithLabelValues(snapshots, "CREATE", resultAllowed, "")); n != 1 {
		t.Errorf("allowed counted %v times, want 1", n)
	}
	if n := testutil.CollectAndCount(w.metrics.latency); n != 1 {
		t.Errorf("latency series %d, want 1", n)
	}
}

func TestServerRefusesWhatIsNoAdmissionReview(t *testing.T) {
	w := startWebhook(t)
	client := w.client(true)
	v1beta1 := bytes.Replace(reviewOf(t, request(t, admissionv1.Create, snapshotsGVR, snapshot(), nil)), []byte("admission.k8s.io/v1"), []byte("admission.k8s.io/v1beta1"), 1)
	for name, tc := range map[string]struct {
		contentType string
		body        []byte
		code        int
		reason      string
	}{
		"not JSON":                   {contentType: "application/yaml", body: []byte("{}"), code: http.StatusUnsupportedMediaType, reason: errorContentType},
		"garbage":                    {contentType: "application/json", body: []byte("{"), code: http.StatusBadRequest, reason: errorBadReview},
		"a review without a request": {contentType: "application/json", body: []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`), code: http.StatusBadRequest, reason: errorBadReview},
		"a v1beta1 review":           {contentType: "application/json", body: v1beta1, code: http.StatusBadRequest, reason: errorBadReview},
		"a body over the limit":      {contentType: "application/json", body: bytes.Repeat([]byte(" "), int(DefaultLimits().MaxBodyBytes)+1), code: http.StatusRequestEntityTooLarge, reason: errorTooLarge},
	} {
		t.Run(name, func(t *testing.T) {
			before := testutil.ToFloat64(w.metrics.requests.WithLabelValues(otherResource, "", resultError, tc.reason))
			resp, _, _, err := w.post(client, tc.contentType, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.code {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.code)
			}
			if n := testutil.ToFloat64(w.metrics.requests.WithLabelValues(otherResource, "", resultError, tc.reason)); n != before+1 {
				t.Errorf("error %s counted %v times, want %v", tc.reason, n, before+1)
			}
		})
	}
	resp, err := client.Get(w.url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: status %d, want 405", resp.StatusCode)
	}
}

func TestServerRefusesTLSBelow12(t *testing.T) {
	w := startWebhook(t)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: w.ca.Pool, MaxVersion: tls.VersionTLS11}}}
	if resp, err := client.Post(w.url, "application/json", bytes.NewReader(nil)); err == nil {
		resp.Body.Close()
		t.Fatal("a TLS 1.1 client was served")
	}
}

// The certificate is swapped in its Secret volume while clients keep
// calling: new connections get the new certificate without a restart, and
// no request fails, neither on connections opened before the swap nor on
// new ones.
func TestServerReloadsItsCertificateWithoutFailingRequests(t *testing.T) {
	w := startWebhook(t)
	body := reviewOf(t, request(t, admissionv1.Create, snapshotsGVR, snapshot(fromClaim("data")), nil))
	var failures, requests atomic.Int64
	var newest atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, keepAlive := range []bool{true, false} {
		client := w.client(keepAlive)
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, review, serial, err := w.post(client, "application/json", body)
				requests.Add(1)
				if err != nil || review == nil || !review.Response.Allowed {
					failures.Add(1)
					t.Errorf("request failed: %v", err)
				}
				if !keepAlive {
					newest.Store(serial)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	stopped := sync.OnceFunc(func() {
		close(stop)
		wg.Wait()
	})
	defer stopped()
	if !eventually(func() bool { return newest.Load() == 100 }) {
		t.Fatalf("served certificate %d before the swap, want 100", newest.Load())
	}
	if err := w.volume.WriteIssued(w.ca, 200); err != nil {
		t.Error(err)
	}
	reloaded := eventually(func() bool { return newest.Load() == 200 })
	time.Sleep(100 * time.Millisecond)
	stopped()
	if !reloaded {
		t.Errorf("served certificate %d after the swap, want 200", newest.Load())
	}
	if failures.Load() > 0 {
		t.Errorf("%d of %d requests failed", failures.Load(), requests.Load())
	}
}

// eventually polls cond for up to 15 s, long enough for the certificate
// watcher's poll should its file watch miss a change.
func eventually(cond func() bool) bool {
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// HTTP/2 is served only with --enable-http2: kube-apiserver calls over
// HTTP/1.1 just as well, and HTTP/2's rapid reset and stream cancellation
// (CVE-2023-44487, CVE-2023-39325) cost a server more than HTTP/1.1
// connections do.
func TestServerSpeaksHTTP2OnlyWhenEnabled(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		w := startWebhook(t, func(c *ServerConfig) { c.EnableHTTP2 = enabled })
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: w.ca.Pool, MinVersion: tls.VersionTLS12}, ForceAttemptHTTP2: true}}
		resp, _, _, err := w.post(client, "application/json", reviewOf(t, request(t, admissionv1.Create, snapshotsGVR, snapshot(fromClaim("data")), nil)))
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 1, true: 2}[enabled]; resp.ProtoMajor != want || resp.StatusCode != http.StatusOK {
			t.Errorf("HTTP/2 enabled %v: answered %d over %s, want 200 over HTTP/%d", enabled, resp.StatusCode, resp.Proto, want)
		}
	}
}

// With --client-ca-file only callers with a certificate of that CA are
// served (seed 004, "Authentication"): kube-apiserver with the client
// certificate its admission configuration gives it, not whoever else
// reaches the Service.
func TestServerRequiresClientCertificatesOfItsClientCA(t *testing.T) {
	clientCA, otherCA := newCA(t), newCA(t)
	caFile := filepath.Join(t.TempDir(), "client-ca.crt")
	if err := os.WriteFile(caFile, clientCA.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	w := startWebhook(t, func(c *ServerConfig) { c.ClientCAFile = caFile })
	apiserver, stranger := clientCert(t, clientCA, "kube-apiserver"), clientCert(t, otherCA, "kube-apiserver")
	body := reviewOf(t, request(t, admissionv1.Create, snapshotsGVR, snapshot(fromClaim("data")), nil))
	for name, tc := range map[string]struct {
		certs  []tls.Certificate
		served bool
	}{
		"no certificate":                 {},
		"a certificate of another CA":    {certs: []tls.Certificate{stranger}},
		"a certificate of the client CA": {certs: []tls.Certificate{apiserver}, served: true},
	} {
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: w.ca.Pool, MinVersion: tls.VersionTLS12, Certificates: tc.certs}}}
		resp, review, _, err := w.post(client, "application/json", body)
		if served := err == nil && resp.StatusCode == http.StatusOK && review.Response.Allowed; served != tc.served {
			t.Errorf("%s: served %v (%v), want %v", name, served, err, tc.served)
		}
	}
	if n := testutil.CollectAndCount(w.metrics.requests); n != 1 {
		t.Errorf("%d request series, want 1: the refused callers never reached the handler", n)
	}
}

// Request headers are bounded (kube-apiserver sends a few hundred bytes):
// what a connection holds before its body is read is bounded too.
func TestServerRefusesHeadersOverItsLimit(t *testing.T) {
	w := startWebhook(t)
	req, err := http.NewRequest(http.MethodPost, w.url, bytes.NewReader(reviewOf(t, request(t, admissionv1.Create, snapshotsGVR, snapshot(fromClaim("data")), nil))))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	// Twice the limit: net/http reads 4 KiB past it before it refuses.
	req.Header.Set("X-Padding", strings.Repeat("x", 2*maxHeaderBytes))
	resp, err := w.client(false).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("headers of %d bytes: status %d, want 431", 2*maxHeaderBytes, resp.StatusCode)
	}
}

func newCA(t *testing.T) *servingcerts.CA {
	t.Helper()
	ca, err := servingcerts.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func clientCert(t *testing.T, ca *servingcerts.CA, name string) tls.Certificate {
	t.Helper()
	cert, err := ca.IssueClient(name)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
