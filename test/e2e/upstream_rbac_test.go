//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// upstreamRBAC is the upstream csi-provisioner v6.4.0's RBAC, verbatim.
const upstreamRBAC = "testdata/upstream-v6.4.0-rbac.yaml"

// TestE2EUpstreamRBAC is the drop-in promise for RBAC: an operator who swaps
// upstream's image for this one and keeps upstream's v6.4.0 RBAC unchanged
// restores snapshots and clones claims, and the sidecar does not storm the
// API server with LISTs of what that RBAC lets it list but not watch
// (VolumeSnapshotContents: upstream GETs each one) or not list at all
// (ReferenceGrants, VolumeAttributesClasses).
//
// The sidecar authenticates with a token of a ServiceAccount bound to the
// rules of upstreamRBAC, and reaches the API server through a proxy that
// counts its requests. Run it alone with
// make test-e2e E2E_RUN=TestE2EUpstreamRBAC.
func TestE2EUpstreamRBAC(t *testing.T) {
	ctx := ctxFor(t)
	ensureGrantCRD(t) // served, so that the sidecar meets the missing rule, not a missing CRD
	rbacNamespace := namespace(t, "upstream-rbac")
	applyUpstreamRBAC(t, rbacNamespace)
	proxy := startCountingProxy(t)
	kubeconfig := serviceAccountKubeconfig(t, proxy.url, rbacNamespace, "csi-provisioner")

	stack, err := world.StartStack(ctx, fmt.Sprintf("upstream-rbac-%04d.csi.example.com", rand.IntN(10000)), nil)
	if err != nil {
		t.Fatal(err)
	}
	// localenv's sidecar, with its --kubeconfig replaced: the last one wins.
	sc, err := world.StartSidecar(ctx, stack, "upstream-rbac", "--kubeconfig="+kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.Stop(10 * time.Second) }) // before the proxy closes: cleanups run last first

	class := storageClass(t, "upstream-rbac", stack.Name)
	app := namespace(t, "app")
	sourceWithSnapshot(t, stack, app, class, "snap", "upstream data")
	createPVC(t, app, "restored", class, restoring("", "snap"))
	if got := readData(t, stack, waitBound(t, app, "restored")); got != "upstream data" {
		t.Errorf("restored data = %q, want %q", got, "upstream data")
	}
	createPVC(t, app, "clone", class, cloning("snap-source"))
	if got := readData(t, stack, waitBound(t, app, "clone")); got != "upstream data" {
		t.Errorf("cloned data = %q, want %q", got, "upstream data")
	}

	// Give a storm (contents listed in full several times a second) the
	// time of two permission checks to show, or stop as soon as it does.
	contents := func(verb string) apiRequest { return apiRequest{verb: verb, resource: "volumesnapshotcontents"} }
	waitFor(t, "the sidecar to check twice whether it may watch contents, or to list them again", func(context.Context) bool {
		return proxy.count(contents("list limit=1")) >= 2 || proxy.count(contents("list")) > 1
	})
	t.Logf("requests of the sidecar: %v", proxy.snapshot())
	for _, resource := range []string{"volumesnapshotcontents", "referencegrants", "volumeattributesclasses", "volumesnapshots"} {
		if n := proxy.count(apiRequest{verb: "list", resource: resource}); n > 1 {
			t.Errorf("%s were listed in full %d times, want at most once", resource, n)
		}
	}
	if n := proxy.count(contents("list")); n != 1 {
		t.Errorf("contents were listed in full %d times, want once: by the informer, before it was refused its watch", n)
	}
	if n, refused := proxy.count(contents("watch")), proxy.refusedCount(contents("watch")); n == 0 || refused != n {
		t.Errorf("%d of %d watches of contents refused, want all: upstream's RBAC has no watch on them", refused, n)
	}
	if n := proxy.count(contents("get")); n == 0 {
		t.Error("the restore read no content with a GET")
	}
	refusals := errorLines(t, sc.LogPath(), "refuses the informer", `resource="snapshot.storage.k8s.io/v1/volumesnapshotcontents"`)
	if len(refusals) != 1 {
		t.Fatalf("the sidecar logged the contents' refusal %d times, want once:\n%s", len(refusals), strings.Join(refusals, "\n"))
	}
	for _, want := range []string{"grant watch on volumesnapshotcontents.snapshot.storage.k8s.io", "reads its VolumeSnapshotContent with a GET"} {
		if !strings.Contains(refusals[0], want) {
			t.Errorf("the refusal's log line does not say %q:\n%s", want, refusals[0])
		}
	}
}

// applyUpstreamRBAC creates the objects of upstreamRBAC with their rules
// unchanged: the ServiceAccount, the Role and the RoleBinding in namespace
// instead of default, the ClusterRole and the ClusterRoleBinding named after
// namespace, so that they do not replace this repository's objects of the
// same names, which the shared sidecar runs under. The cluster-wide ones are
// deleted after the test; the others go with the namespace.
func applyUpstreamRBAC(t *testing.T, namespace string) {
	t.Helper()
	ctx := ctxFor(t)
	raw, err := os.ReadFile(upstreamRBAC)
	if err != nil {
		t.Fatal(err)
	}
	rename := func(name string) string { return name + "-" + namespace }
	reader := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", upstreamRBAC, err)
		}
		rbac := world.Kube.RbacV1()
		switch o := obj.(type) {
		case *v1.ServiceAccount:
			o.Namespace = namespace
			_, err = world.Kube.CoreV1().ServiceAccounts(namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			o.Name = rename(o.Name)
			_, err = rbac.ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
			t.Cleanup(func() { _ = rbac.ClusterRoles().Delete(ctx, o.Name, metav1.DeleteOptions{}) })
		case *rbacv1.ClusterRoleBinding:
			o.Name, o.RoleRef.Name, o.Subjects = rename(o.Name), rename(o.RoleRef.Name), inNamespace(o.Subjects, namespace)
			_, err = rbac.ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
			t.Cleanup(func() { _ = rbac.ClusterRoleBindings().Delete(ctx, o.Name, metav1.DeleteOptions{}) })
		case *rbacv1.Role:
			o.Namespace = namespace
			_, err = rbac.Roles(namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			o.Namespace, o.Subjects = namespace, inNamespace(o.Subjects, namespace)
			_, err = rbac.RoleBindings(namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("%s: unexpected %T", upstreamRBAC, obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// inNamespace moves the ServiceAccount subjects to namespace.
func inNamespace(subjects []rbacv1.Subject, namespace string) []rbacv1.Subject {
	for i := range subjects {
		if subjects[i].Kind == rbacv1.ServiceAccountKind {
			subjects[i].Namespace = namespace
		}
	}
	return subjects
}

// serviceAccountKubeconfig writes a kubeconfig for server (a local test
// server: its certificate is not verified) that authenticates with a token
// of the ServiceAccount namespace/name, as a pod of that ServiceAccount
// would, and returns its path.
func serviceAccountKubeconfig(t *testing.T, server, namespace, name string) string {
	t.Helper()
	token, err := world.Kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctxFor(t), name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: name}
	cfg.CurrentContext = "local"
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// apiRequest is a kind of request as the API server's audit log names it:
// verb (get, list, watch, create, ...; a list of at most one object is
// "list limit=1") and resource (with its subresource, e.g. "pods/status").
type apiRequest struct{ verb, resource string }

func (r apiRequest) String() string { return r.verb + " " + r.resource }

// countingProxy forwards requests to the local API server and counts them,
// and the refused ones (403) apart.
type countingProxy struct {
	url string

	mu               sync.Mutex
	counts, refusals map[apiRequest]int
}

// startCountingProxy starts a proxy to the API server on loopback, closed
// after the test.
func startCountingProxy(t *testing.T) *countingProxy {
	t.Helper()
	target, err := url.Parse(world.Cluster.Server())
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{counts: map[apiRequest]int{}, refusals: map[apiRequest]int{}}
	// TLS: client-go sends credentials over TLS only.
	srv := httptest.NewTLSServer(&httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) },
		// The local API server's certificate is self-signed; its
		// kubeconfigs skip verification too.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback test server
		// Watch events as they come.
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			p.record(classify(resp.Request), resp.StatusCode)
			return nil
		},
	})
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	p.url = srv.URL
	return p
}

func (p *countingProxy) record(r apiRequest, code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[r]++
	if code == http.StatusForbidden {
		p.refusals[r]++
	}
}

// count is how many requests of kind r the proxy forwarded.
func (p *countingProxy) count(r apiRequest) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[r]
}

// refusedCount is how many of them the API server refused.
func (p *countingProxy) refusedCount(r apiRequest) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refusals[r]
}

// snapshot describes every count, for the test's log.
func (p *countingProxy) snapshot() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var lines []string
	for r, n := range p.counts {
		lines = append(lines, fmt.Sprintf("%s: %d (%d refused)", r, n, p.refusals[r]))
	}
	slices.Sort(lines)
	return "\n  " + strings.Join(lines, "\n  ")
}

// classify names a request to the API server: /api/v1/... and
// /apis/<group>/<version>/..., optionally in namespaces/<ns>/, then the
// resource, its name and subresource. Anything else (discovery, /version)
// is named by its path.
func classify(r *http.Request) apiRequest {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var rest []string
	switch {
	case len(parts) > 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) > 3 && parts[0] == "apis":
		rest = parts[3:]
	default:
		return apiRequest{verb: strings.ToLower(r.Method), resource: r.URL.Path}
	}
	if len(rest) > 2 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	resource, named := rest[0], len(rest) > 1
	if len(rest) > 2 {
		resource += "/" + rest[2]
	}
	query := r.URL.Query()
	verb := map[string]string{http.MethodPost: "create", http.MethodPut: "update", http.MethodPatch: "patch",
		http.MethodDelete: "delete"}[r.Method]
	switch {
	case r.Method != http.MethodGet:
	case query.Get("watch") == "true" || query.Get("watch") == "1":
		verb = "watch"
	case named:
		verb = "get"
	case query.Get("limit") == "1":
		verb = "list limit=1"
	default:
		verb = "list"
	}
	return apiRequest{verb: verb, resource: resource}
}

// errorLines returns the error lines of a klog log file that contain every
// one of parts.
func errorLines(t *testing.T, path string, parts ...string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "E") {
			continue
		}
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			out = append(out, line)
		}
	}
	return out
}
