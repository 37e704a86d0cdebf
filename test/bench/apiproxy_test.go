package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func TestClassifyNamesVerbAndResourceAsTheAPIServerDoes(t *testing.T) {
	tests := map[string]struct {
		method, url string
		want        apiRequest
	}{
		"a get of a namespaced object": {"GET", "/api/v1/namespaces/ns/persistentvolumeclaims/c",
			apiRequest{"get", "persistentvolumeclaims"}},
		"a list in a namespace": {"GET", "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities?labelSelector=a%3Db",
			apiRequest{"list", "csistoragecapacities"}},
		"a list across namespaces": {"GET", "/api/v1/persistentvolumeclaims?limit=500", apiRequest{"list", "persistentvolumeclaims"}},
		"a watch": {"GET", "/apis/storage.k8s.io/v1/csinodes?watch=true&resourceVersion=5",
			apiRequest{"watch", "csinodes"}},
		"a watch through the deprecated path": {"GET", "/api/v1/watch/namespaces/ns/pods", apiRequest{"watch", "pods"}},
		"a get of a namespace is of the namespaces resource": {"GET", "/api/v1/namespaces/ns",
			apiRequest{"get", "namespaces"}},
		"a get of a cluster-scoped object": {"GET", "/apis/storage.k8s.io/v1/storageclasses/fast",
			apiRequest{"get", "storageclasses"}},
		"a create":                        {"POST", "/apis/events.k8s.io/v1/namespaces/ns/events", apiRequest{"create", "events"}},
		"an update of a subresource":      {"PUT", "/api/v1/namespaces/ns/persistentvolumeclaims/c/status", apiRequest{"update", "persistentvolumeclaims/status"}},
		"a patch":                         {"PATCH", "/api/v1/persistentvolumes/pv", apiRequest{"patch", "persistentvolumes"}},
		"a delete":                        {"DELETE", "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities/csisc-x", apiRequest{"delete", "csistoragecapacities"}},
		"a delete of a collection":        {"DELETE", "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities", apiRequest{"deletecollection", "csistoragecapacities"}},
		"discovery is a get of nothing":   {"GET", "/apis/storage.k8s.io/v1", apiRequest{"get", ""}},
		"the version is a get of nothing": {"GET", "/version", apiRequest{"get", ""}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			u, err := url.Parse(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			if got := classify(tc.method, u); got != tc.want {
				t.Errorf("classify(%s %s) = %+v, want %+v", tc.method, tc.url, got, tc.want)
			}
		})
	}
}

// TestProxyCountsWhatAClientAsksThroughItsKubeconfig: a client built from
// the kubeconfig the proxy writes reaches the server through the proxy, with
// its own token, and each of its requests is counted once.
func TestProxyCountsWhatAClientAsksThroughItsKubeconfig(t *testing.T) {
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer secret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"ns"}}`)
	}))
	defer server.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	proxy, err := startAPIProxy(ctx, server.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	dir := t.TempDir()
	original := filepath.Join(dir, "original")
	if err := os.WriteFile(original, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: %s, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: secret}}]
contexts: [{name: local, context: {cluster: local, user: u}}]
current-context: local
`, server.URL), 0o600); err != nil {
		t.Fatal(err)
	}
	proxied := filepath.Join(dir, "proxied")
	if err := proxy.writeKubeconfig(original, proxied); err != nil {
		t.Fatal(err)
	}
	config, err := clientcmd.BuildConfigFromFlags("", proxied)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(config)
	for range 2 {
		if _, err := client.CoreV1().Namespaces().Get(ctx, "ns", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	d := deltaOf(nil, proxy.snapshot())
	if got := d[apiRequest{"get", "namespaces"}]; got != 2 || d.reads() != 2 {
		t.Errorf("counted %v, want 2 gets of namespaces", d)
	}
}
