package snapshotwebhook

// Scenarios from the adversarial review of issue 22's hardening (72740e5,
// 958e25a), of a caller that can reach the webhook's Service without
// authentication (no --client-ca-file, the default). Each test fails when
// it finds the defect it describes.

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
)

// The lean decoding looks the metadata up by its exact key, "metadata",
// but decodes the rest of the object with encoding/json, which matches
// field names case-insensitively: an object whose metadata is under
// "Metadata" (any other case) is decoded in full, managed fields and owner
// references included, at ~195 bytes per byte. One unauthenticated request
// of a few MiB then allocates far past requestMemoryFactor, and
// MemoryBound, hence deploy/'s memory limit, is no bound.
func TestCapitalisedMetadataIsNotDecoded(t *testing.T) {
	const size = 256 << 10
	h := NewHandler(&Admitter{}, nil, Limits{MaxInFlight: 1, MaxBodyBytes: 8 * size, MaxBodyBytesInFlight: 8 * size})
	items := strings.TrimSuffix(strings.Repeat("{},", size/3), ",")
	for _, key := range []string{"Metadata", "METADATA"} {
		object := []byte(`{"apiVersion":"snapshot.storage.k8s.io/v1","kind":"VolumeSnapshot","` + key +
			`":{"managedFields":[` + items + `],"ownerReferences":[` + items + `]},"spec":{"source":{"persistentVolumeClaimName":"data"}}}`)
		body := reviewOf(t, request(t, admissionv1.Create, snapshotsGVR, object, nil))
		allocated := allocatedBy(func() {
			if rec := serve(t, h, body, int64(len(body))); rec.Code != http.StatusOK {
				t.Fatalf("%s: %d %s", key, rec.Code, rec.Body)
			}
		})
		t.Logf("%q: %d KiB body, %d KiB allocated (%.1f per byte)", key, len(body)>>10, allocated>>10, float64(allocated)/float64(len(body)))
		if allocated > requestMemoryFactor*uint64(len(body)) {
			t.Errorf("%q: %d bytes allocated for a %d-byte body (%.0f per byte), more than requestMemoryFactor (%d): "+
				"the lean decoding is skipped when the metadata's key is not spelled \"metadata\"",
				key, allocated, len(body), float64(allocated)/float64(len(body)), requestMemoryFactor)
		}
	}
}

// rawConn opens a TLS connection to w and sends head, then nothing more.
func rawConn(t *testing.T, w *webhook, head string) *tls.Conn {
	t.Helper()
	addr := strings.TrimPrefix(strings.TrimSuffix(w.url, snapshotPath), "https://")
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: w.ca.Pool, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := conn.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// The bytes in flight are taken at a request's declared Content-Length (at
// --max-request-bytes for a chunked body) before a byte of its body has
// arrived, and held until the body is read or ReadTimeout (10 s) ends it.
// Two connections that send headers and then stall (one chunked, one
// declaring 2 MiB; ~300 bytes, no authentication) hold all 6 MiB of the
// default --max-request-bytes-in-flight: every kube-apiserver call gets
// 429, which under failurePolicy Fail refuses every snapshot write in the
// cluster, for as long as the attacker renews the two connections every
// 10 s. (128 stalled connections do the same to --max-requests-in-flight.)
func TestStalledBodiesDoNotStarveKubeAPIServer(t *testing.T) {
	handler := NewHandler(&Admitter{}, nil, DefaultLimits())
	mux := http.NewServeMux()
	mux.Handle(snapshotPath, handler)
	w := startWebhook(t, func(c *ServerConfig) { c.Handler = mux })
	head := "POST " + snapshotPath + " HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\n"
	rawConn(t, w, head+"Transfer-Encoding: chunked\r\n\r\n")
	rawConn(t, w, head+fmt.Sprintf("Content-Length: %d\r\n\r\n{", 2<<20))
	time.Sleep(300 * time.Millisecond) // both handlers have taken their share
	resp, review, _, err := w.post(w.client(true), "application/json", allowedReview(t))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || review == nil || !review.Response.Allowed {
		t.Errorf("kube-apiserver's call while two stalled connections hold ~300 bytes of headers: %d, want 200 allowed "+
			"(the byte budget is taken by bodies that never come)", resp.StatusCode)
	}
}

// What a connection holds before its request reaches the Handler (its
// headers, up to maxHeaderBytes + 4 KiB, for up to ReadTimeout) is counted
// in MemoryBound as connectionOverhead per connection, and connections
// are bounded by --max-connections (TestConnectionsOverTheLimitAreClosed):
// stalled headers measured here must fit that figure, or the bound the
// memory limit is set from is a lie.
func TestStalledHeadersFitTheConnectionOverhead(t *testing.T) {
	w := startWebhook(t)
	const conns = 128
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var open []*tls.Conn
	for range conns {
		open = append(open, rawConn(t, w, "POST "+snapshotPath+" HTTP/1.1\r\nHost: webhook\r\n"))
	}
	time.Sleep(200 * time.Millisecond)
	before := heap()
	line := "X-Padding: " + strings.Repeat("x", 1<<10)
	for _, c := range open {
		// 1 KiB writes keep the client's own TLS buffers small.
		for sent := 0; sent < maxHeaderBytes+2<<10; sent += len(line) {
			if _, err := c.Write([]byte(line)); err != nil {
				t.Fatalf("a connection was refused after %d bytes of headers: %v", sent, err)
			}
		}
	}
	time.Sleep(500 * time.Millisecond)
	perConn := (int64(heap()) - int64(before)) / conns
	t.Logf("%d connections with stalled headers: %d KiB held per connection (connectionOverhead %d KiB)", conns, perConn>>10, connectionOverhead>>10)
	if perConn > connectionOverhead {
		t.Errorf("a connection with stalled headers holds %d KiB, more than the %d KiB MemoryBound counts", perConn>>10, connectionOverhead>>10)
	}
}

// Connections beyond --max-connections are closed as soon as they are
// accepted, and a place is free again once a connection closes.
func TestConnectionsOverTheLimitAreClosed(t *testing.T) {
	w := startWebhook(t, func(c *ServerConfig) { c.MaxConnections = 4 })
	addr := strings.TrimPrefix(strings.TrimSuffix(w.url, snapshotPath), "https://")
	dial := func() (*tls.Conn, error) {
		return tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{RootCAs: w.ca.Pool, MinVersion: tls.VersionTLS12})
	}
	var open []*tls.Conn
	for range 4 {
		c, err := dial()
		if err != nil {
			t.Fatalf("connection %d of 4: %v", len(open)+1, err)
		}
		open = append(open, c)
	}
	if c, err := dial(); err == nil {
		_ = c.Close()
		t.Fatal("a fifth connection was served with --max-connections 4")
	}
	_ = open[0].Close()
	var err error
	for range 50 { // the server sees the close a moment later
		var c *tls.Conn
		if c, err = dial(); err == nil {
			_ = c.Close()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Errorf("no connection once one of the 4 closed: %v", err)
	}
	for _, c := range open[1:] {
		_ = c.Close()
	}
}

var _ net.Conn = (*tls.Conn)(nil)
