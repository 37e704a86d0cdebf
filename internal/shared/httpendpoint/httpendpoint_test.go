package httpendpoint

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestServeAnswersUntilTheContextEnds(t *testing.T) {
	ctx, stop := context.WithCancel(t.Context())
	addr, err := Serve(ctx, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + addr.String() + "/"
	if body := get(t, url); body != "ok" {
		t.Errorf("GET %s = %q, want ok", url, body)
	}
	stop()
	for {
		// Shutdown closes the listener at once; the goroutine may not have
		// run yet, so poll (the test times out if it never closes).
		if _, err := http.Get(url); err != nil { //nolint:noctx // local test endpoint
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestServeRefusesAnAddressInUse(t *testing.T) {
	addr, err := Serve(t.Context(), "127.0.0.1:0", http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Serve(t.Context(), addr.String(), http.NotFoundHandler()); err == nil || !strings.Contains(err.Error(), "--http-endpoint") {
		t.Errorf("Serve on a bound port = %v, want an error naming --http-endpoint", err)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url) //nolint:noctx // local test endpoint
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
