package controllerrun

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/xns-csi/csi-provisioner/internal/shared/controllerflags"
	"github.com/xns-csi/csi-provisioner/internal/shared/leader"
	"github.com/xns-csi/csi-provisioner/internal/shared/leader/leadertest"
	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge/metricstest"
)

// newEnv returns the Env of component "test-controller" for opts, its API
// server answering with api.
func newEnv(t *testing.T, opts *controllerflags.Common, api http.HandlerFunc) *Env {
	t.Helper()
	server := httptest.NewServer(api)
	t.Cleanup(server.Close)
	opts.Kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: '" + server.URL + "'}}]\n" +
		"contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {}}]\n"
	if err := os.WriteFile(opts.Kubeconfig, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	env, err := New(t.Context(), opts, "test-controller", scheme.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func TestNewRecordsEventsAsTheComponentThroughAClientOfTheirOwn(t *testing.T) {
	posted := make(chan *v1.Event, 1)
	opts := controllerflags.New(1)
	opts.KubeAPIQPS, opts.KubeAPIBurst = 7, 11
	env := newEnv(t, &opts, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/namespaces/ns/events" {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil); err == nil {
			posted <- obj.(*v1.Event)
		}
		w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	})
	if env.Config.QPS != 7 || env.Config.Burst != 11 || !strings.HasPrefix(env.Config.UserAgent, "test-controller") {
		t.Errorf("Config: QPS %v, burst %d, user agent %q; want 7, 11, test-controller/<host>", env.Config.QPS, env.Config.Burst, env.Config.UserAgent)
	}
	if env.Events.CoreV1().RESTClient().GetRateLimiter() == env.Kube.CoreV1().RESTClient().GetRateLimiter() {
		t.Error("events share the core client's rate limiter")
	}

	env.Recorder.Event(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}, v1.EventTypeNormal, "Tested", "a test event")
	event := <-posted // the test times out if it never comes
	if event.Source.Component != "test-controller" || event.Reason != "Tested" || event.InvolvedObject.Kind != "Pod" {
		t.Errorf("event from %q, reason %q, about a %q; want test-controller, Tested, Pod", event.Source.Component, event.Reason, event.InvolvedObject.Kind)
	}
}

func TestTheEndpointServesMetricsHealthAndTheComponentsOwn(t *testing.T) {
	opts := controllerflags.New(1)
	opts.MetricsPath = "/custom-metrics"
	env := newEnv(t, &opts, http.NotFound)
	counter := prometheus.NewCounter(prometheus.CounterOpts{Name: "controllerrun_test_total"})
	env.Registry.MustRegister(counter)
	counter.Inc()
	ready := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ready")) })
	mux := env.mux(map[string]http.Handler{"/readyz": ready})

	for name, tt := range map[string]struct {
		path     string
		wantCode int
		want     string
	}{
		"the controller's metrics are on --metrics-path":         {path: "/custom-metrics", wantCode: 200, want: "controllerrun_test_total 1"},
		"the legacy registry's metrics are there too":            {path: "/custom-metrics", wantCode: 200, want: "go_goroutines"},
		"/healthz answers ok":                                    {path: "/healthz", wantCode: 200, want: "ok"},
		"a component's own endpoint is served":                   {path: "/readyz", wantCode: 200, want: "ready"},
		"metrics are not on /metrics when --metrics-path is not": {path: "/metrics", wantCode: 404},
	} {
		t.Run(name, func(t *testing.T) {
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if w.Code != tt.wantCode || !strings.Contains(w.Body.String(), tt.want) {
				t.Errorf("GET %s = %d %q, want %d containing %q", tt.path, w.Code, w.Body.String(), tt.wantCode, tt.want)
			}
		})
	}
}

// TestTheEndpointServesTheLeaderElectionStatus: as the sidecar's, the
// validator's and the transfer controller's endpoint serves client-go's
// leader_election_master_status, which component-base registers with the
// legacy registry: 0 from the moment leader.Run builds its elector, 1
// while this replica leads.
func TestTheEndpointServesTheLeaderElectionStatus(t *testing.T) {
	opts := controllerflags.New(1)
	env := newEnv(t, &opts, http.NotFound)
	leadertest.Elect(t, "test-controller")
	w := httptest.NewRecorder()
	env.mux(nil).ServeHTTP(w, httptest.NewRequest(http.MethodGet, opts.MetricsPath, nil))
	metricstest.Expect(t, metricstest.Lines(w.Body.Bytes(), "leader_election_master_status"), `leader_election_master_status{name=""} 0`)
}

func TestRunWithoutLeaderElectionRunsTheControllerDirectly(t *testing.T) {
	opts := controllerflags.New(1)
	env := newEnv(t, &opts, http.NotFound)
	env.runLeader = func(context.Context, leader.Config, func(context.Context)) error {
		t.Error("leader election ran")
		return nil
	}
	ran := false
	if err := env.Run(t.Context(), Controller{LockName: "lock", Run: func(context.Context) { ran = true }}); err != nil || !ran {
		t.Errorf("Run() = %v, controller ran: %v; want nil, true", err, ran)
	}
}

func TestRunUnderLeaderElectionUsesALeaseClientOfItsOwn(t *testing.T) {
	opts := controllerflags.New(1)
	opts.LeaderElection.Enabled = true
	opts.HTTPEndpoint = "127.0.0.1:0"
	if err := opts.FeatureGate.Set("ReleaseLeaderElectionOnExit=true"); err != nil {
		t.Fatal(err)
	}
	env := newEnv(t, &opts, http.NotFound)
	var got leader.Config
	env.runLeader = func(ctx context.Context, cfg leader.Config, run func(context.Context)) error {
		got = cfg
		run(ctx)
		return nil
	}
	ran := false
	if err := env.Run(t.Context(), Controller{LockName: "lock", Run: func(context.Context) { ran = true }}); err != nil || !ran {
		t.Fatalf("Run() = %v, controller ran as leader: %v; want nil, true", err, ran)
	}

	if got.LockName != "lock" || got.Options != opts.LeaderElection || !got.ReleaseOnExit {
		t.Errorf("leader election of %q with %+v, release on exit %v; want lock, %+v, true", got.LockName, got.Options, got.ReleaseOnExit, opts.LeaderElection)
	}
	for name, c := range map[string]kubernetes.Interface{"core": env.Kube, "events": env.Events} {
		if got.Client.CoreV1().RESTClient().GetRateLimiter() == c.CoreV1().RESTClient().GetRateLimiter() {
			t.Errorf("the Lease client shares the %s client's rate limiter", name)
		}
	}
	if got.Mux == nil {
		t.Fatal("the leader health check has no endpoint to join")
	}
	w := httptest.NewRecorder()
	got.Mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if w.Body.String() != "ok" {
		t.Errorf("the leader health check joins a mux whose /healthz answers %q, not the endpoint's", w.Body.String())
	}
}
