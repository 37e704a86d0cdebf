package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
)

// apiProxy stands between one sidecar and the API server and counts its
// requests by verb and resource. The upstream csi-provisioner exposes no
// client-go request metrics (rest_client_requests_total), so its requests
// are counted here, and this sidecar's alike, so that both are counted the
// same way. The sidecar's own bearer token passes through: it keeps its
// identity and its RBAC.
type apiProxy struct {
	server *http.Server
	addr   string
	mu     sync.Mutex
	counts map[apiRequest]int
}

// apiRequest is the kind of a request: its verb as the API server's audit
// names it (get, list, watch, create, update, patch, delete,
// deletecollection) and its resource, "resource/subresource" for a
// subresource, "" for discovery and other paths outside the resources.
type apiRequest struct {
	verb, resource string
}

// isRead is true for the reads that cost the API server a lookup: get and
// list. A watch is counted apart: it is opened once and then streams.
func (r apiRequest) isRead() bool { return r.verb == "get" || r.verb == "list" }

// startAPIProxy serves a proxy to the API server at server on a free local
// port, until ctx ends or Close. It serves HTTPS, with a self-signed
// certificate: client-go sends no credentials over plain HTTP.
func startAPIProxy(ctx context.Context, server string) (*apiProxy, error) {
	target, err := url.Parse(server)
	if err != nil {
		return nil, err
	}
	// The local API server's certificate is self-signed; the sidecars'
	// kubeconfigs skip its verification too.
	transport, err := rest.TransportFor(&rest.Config{Host: server, TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		return nil, err
	}
	certificate, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	listener, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &apiProxy{addr: listener.Addr().String(), counts: map[apiRequest]int{}}
	forward := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport:     transport,
		FlushInterval: -1, // watches stream
	}
	p.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.counts[classify(r.Method, r.URL)]++
		p.mu.Unlock()
		forward.ServeHTTP(w, r)
	}), BaseContext: func(net.Listener) context.Context { return ctx },
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{certificate}, MinVersion: tls.VersionTLS12}}
	go func() { _ = p.server.ServeTLS(listener, "", "") }()
	return p, nil
}

// Close stops the proxy and closes the connections through it, watches
// included.
func (p *apiProxy) Close() { _ = p.server.Close() }

// snapshot returns the counts so far.
func (p *apiProxy) snapshot() map[apiRequest]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.counts)
}

// writeKubeconfig writes to path a copy of the kubeconfig at from whose
// clusters are reached through the proxy.
func (p *apiProxy) writeKubeconfig(from, path string) error {
	config, err := clientcmd.LoadFromFile(from)
	if err != nil {
		return err
	}
	if len(config.Clusters) == 0 {
		return errors.New(from + " names no cluster")
	}
	for _, c := range config.Clusters {
		c.Server, c.InsecureSkipTLSVerify, c.CertificateAuthority, c.CertificateAuthorityData = "https://"+p.addr, true, "", nil
	}
	return clientcmd.WriteToFile(*config, path)
}

// classify names the verb and resource of a request to the API server from
// its method and path, as the API server's request info does for the paths
// client-go uses: /api/v1/... and /apis/<group>/<version>/..., optionally
// under namespaces/<namespace>/, then <resource>[/<name>[/<subresource>]].
func classify(method string, u *url.URL) apiRequest {
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		segs = segs[2:]
	case len(segs) >= 3 && segs[0] == "apis":
		segs = segs[3:]
	default:
		segs = nil
	}
	watch := u.Query().Get("watch") == "true" || u.Query().Get("watch") == "1"
	if len(segs) > 0 && segs[0] == "watch" { // the deprecated watch paths
		watch, segs = true, segs[1:]
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		segs = segs[2:] // a namespaced resource; namespaces/<name> is a namespace itself
	}
	var resource string
	if len(segs) > 0 {
		resource = segs[0]
	}
	if len(segs) > 2 {
		resource += "/" + segs[2]
	}
	named := len(segs) > 1
	verb := strings.ToLower(method)
	switch method {
	case http.MethodGet:
		switch {
		case watch:
			verb = "watch"
		case named || resource == "":
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodDelete:
		if !named {
			verb = "deletecollection"
		}
	}
	return apiRequest{verb: verb, resource: resource}
}

// requestDelta is what changed between two snapshots of a proxy's counts.
type requestDelta map[apiRequest]int

func deltaOf(before, after map[apiRequest]int) requestDelta {
	d := requestDelta{}
	for k, v := range after {
		if n := v - before[k]; n > 0 {
			d[k] = n
		}
	}
	return d
}

// reads is the number of gets and lists.
func (d requestDelta) reads() int {
	n := 0
	for k, v := range d {
		if k.isRead() {
			n += v
		}
	}
	return n
}

// byVerb lists the counts per verb, "get 3, list 1, ...", sorted by verb.
func (d requestDelta) byVerb() string {
	verbs := map[string]int{}
	for k, v := range d {
		verbs[k.verb] += v
	}
	return joinCounts(verbs)
}

// readsByResource lists the gets and lists per resource, "get
// persistentvolumeclaims 100, ...".
func (d requestDelta) readsByResource() string {
	reads := map[string]int{}
	for k, v := range d {
		if k.isRead() {
			name := k.resource
			if name == "" {
				name = "(discovery)"
			}
			reads[k.verb+" "+name] += v
		}
	}
	return joinCounts(reads)
}

func joinCounts(counts map[string]int) string {
	if len(counts) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	return strings.Join(parts, ", ")
}
