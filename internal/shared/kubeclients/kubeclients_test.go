package kubeclients

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func TestCoreClientsSpeakProtobufAndAreApart(t *testing.T) {
	var mu sync.Mutex
	var accepts []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		accepts = append(accepts, r.Header.Get("Accept"))
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer server.Close()
	config := &rest.Config{Host: server.URL, QPS: 5, Burst: 10}
	kube, events, err := Core(config)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []kubernetes.Interface{kube, events} {
		_, _ = c.CoreV1().Namespaces().Get(t.Context(), "x", metav1.GetOptions{})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(accepts) != 2 {
		t.Fatalf("%d requests reached the server, want 2", len(accepts))
	}
	for _, a := range accepts {
		if !strings.HasPrefix(a, "application/vnd.kubernetes.protobuf") {
			t.Errorf("Accept %q, want protobuf first", a)
		}
	}
	if kube.CoreV1().RESTClient().GetRateLimiter() == events.CoreV1().RESTClient().GetRateLimiter() {
		t.Error("events share the core client's rate limiter")
	}
	if config.ContentType != "" {
		t.Errorf("Core changed the caller's config: ContentType %q", config.ContentType)
	}
}
