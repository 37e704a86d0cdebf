package kubeclients

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// headerRecorder is an API server that answers NotFound to everything
// and records one header of each request.
type headerRecorder struct {
	header string
	mu     sync.Mutex
	seen   []string
}

func (h *headerRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.seen = append(h.seen, r.Header.Get(h.header))
	h.mu.Unlock()
	http.NotFound(w, r)
}

func (h *headerRecorder) values() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen
}

func TestCoreClientsSpeakProtobufAndAreApart(t *testing.T) {
	recorder := &headerRecorder{header: "Accept"}
	server := httptest.NewServer(recorder)
	defer server.Close()
	config := &rest.Config{Host: server.URL, QPS: 5, Burst: 10}
	kube, events, err := Core(config)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []kubernetes.Interface{kube, events} {
		_, _ = c.CoreV1().Namespaces().Get(t.Context(), "x", metav1.GetOptions{})
	}
	accepts := recorder.values()
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

func TestRestConfigAsksForNoCompression(t *testing.T) {
	recorder := &headerRecorder{header: "Accept-Encoding"}
	server := httptest.NewUnstartedServer(recorder)
	defer server.Close()
	// Over TLS, as to an API server: client-go gives a plain-HTTP config
	// Go's default transport, which compresses whatever the config says.
	server.StartTLS()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	file := clientcmdapi.NewConfig()
	file.Clusters["c"] = &clientcmdapi.Cluster{Server: server.URL, InsecureSkipTLSVerify: true}
	file.Contexts["c"] = &clientcmdapi.Context{Cluster: "c"}
	file.CurrentContext = "c"
	if err := clientcmd.WriteToFile(*file, kubeconfig); err != nil {
		t.Fatal(err)
	}
	config, err := RestConfig(kubeconfig, "test")
	if err != nil {
		t.Fatal(err)
	}
	kube, _, err := Core(config)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = kube.CoreV1().Namespaces().Get(t.Context(), "x", metav1.GetOptions{})
	encodings := recorder.values()
	if len(encodings) != 1 {
		t.Fatalf("%d requests reached the server, want 1", len(encodings))
	}
	if strings.Contains(encodings[0], "gzip") {
		t.Errorf("Accept-Encoding %q, want no gzip", encodings[0])
	}
}
