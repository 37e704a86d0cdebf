//go:build e2e

package e2e

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// drainDelay is the replaced webhook's --shutdown-delay-duration here:
// longer than the moves below take to reach kube-apiserver.
const drainDelay = "3s"

// kubeProxyDelay is how long after a move of the endpoints new connections
// still reach the old one: kube-proxy's --iptables-min-sync-period
// (default 1 s), the least it takes on a quiet cluster.
const kubeProxyDelay = time.Second

// TestE2ESnapshotWebhookDrain replaces one webhook process by another
// while kube-apiserver keeps calling it (dry-run creations from three
// clients, failurePolicy Fail, so a failed call is a failed request), as a
// rolling update does: the new one is started, the calls are moved to it,
// and the old one gets SIGTERM at once (no preStop sleep: the server's
// drain alone must cover the move). No admission may fail (issue 22,
// defect 10).
//
// The local control plane has no kube-proxy and resolves no Service, so a
// move is expressed two ways:
//   - EndpointMoved: kube-apiserver calls a fixed address whose TCP
//     forwarder (forwarder, below) stands for the Service: each new
//     connection goes to the endpoint of the moment, and keeps the endpoint
//     it was opened to after a move (kube-proxy's DNAT and conntrack). A
//     move takes effect kubeProxyDelay after it is made, as kube-proxy
//     reprograms a node after the EndpointSlice changed. The old process
//     must answer what still reaches it: new connections for a second, and
//     kube-apiserver's kept-alive ones.
//   - RegistrationMoved: the webhook configuration's URL is changed to the
//     new process; kube-apiserver calls the old one until its informer sees
//     the change (milliseconds here).
func TestE2ESnapshotWebhookDrain(t *testing.T) {
	ctx := ctxFor(t)
	ns := namespace(t, "webhook-drain")
	ca, certs := webhookCerts(t)
	start := func(name string) *localenv.SnapshotWebhook {
		wh, err := world.StartSnapshotWebhook(ctx, "snapshot-webhook-"+name, certs.CertFile(), certs.KeyFile(), "--v=2",
			"--shutdown-delay-duration="+drainDelay)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { wh.Stop(30 * time.Second) })
		return wh
	}

	t.Run("EndpointMoved", func(t *testing.T) {
		label := ns + "-endpoint"
		old := start(label + "-old")
		service := newForwarder(t, old.URL)
		registerURL(t, ctx, label, service.url(), ca.PEM)
		answered := replaceUnderLoad(t, ctx, label, old, start(label+"-new"), func(to *localenv.SnapshotWebhook) {
			service.move(to.URL, kubeProxyDelay)
		})
		if answered == 0 {
			t.Errorf("the old webhook answered nothing after SIGTERM, while new connections reached it for %v more", kubeProxyDelay)
		}
	})
	t.Run("RegistrationMoved", func(t *testing.T) {
		label := ns + "-registration"
		old := start(label + "-old")
		hook := registerURL(t, ctx, label, old.URL, ca.PEM)
		replaceUnderLoad(t, ctx, label, old, start(label+"-new"), func(to *localenv.SnapshotWebhook) {
			configs := world.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
			config, err := configs.Get(ctx, hook, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			url := to.URL + "/volumesnapshot"
			config.Webhooks[0].ClientConfig.URL = &url
			if _, err := configs.Update(ctx, config, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	})
}

// replaceUnderLoad keeps kube-apiserver calling the webhook for objects
// labeled label while move sends its calls from old to replacement and
// old gets SIGTERM right after; it checks that no admission failed, that
// old reported not ready while it drained, and that replacement took over.
// It returns how many calls old answered after SIGTERM.
func replaceUnderLoad(t *testing.T, ctx context.Context, label string, old, replacement *localenv.SnapshotWebhook, move func(to *localenv.SnapshotWebhook)) float64 {
	load := startLoad(t, ctx, contentJSON(label, label+"-load", label+".example.com", "snap", "", ""), 3)
	time.Sleep(time.Second) // calls to the old process only
	move(replacement)
	terminated := time.Now()
	atTerm := webhookAdmissions(t, old, "volumesnapshotcontents", "allowed")
	go old.Stop(30 * time.Second) // SIGTERM
	drained, notReady := atTerm, false
	for exited, _ := old.Exited(); !exited; exited, _ = old.Exited() {
		if n, err := admissions(old); err == nil {
			drained = n
		}
		notReady = notReady || readyz(old) == http.StatusServiceUnavailable
		time.Sleep(50 * time.Millisecond)
	}
	stopped := time.Since(terminated)
	before := webhookAdmissions(t, replacement, "volumesnapshotcontents", "allowed")
	time.Sleep(time.Second) // calls to the replacement only
	calls, failures := load.stop()
	t.Logf("%d dry-run creations, %d failed; the old webhook answered %v after SIGTERM and exited %v after it",
		calls, failures, drained-atTerm, stopped.Round(100*time.Millisecond))
	if failures > 0 {
		t.Errorf("%d of %d admissions failed while the webhook was replaced", failures, calls)
	}
	if !notReady {
		t.Error("the terminated webhook never reported not ready on /readyz")
	}
	if after := webhookAdmissions(t, replacement, "volumesnapshotcontents", "allowed"); after <= before {
		t.Error("the replacement admitted nothing once the old webhook had exited")
	}
	if rss, err := scrapeSeries(replacement.HTTPAddr, "process_resident_memory_bytes"); err == nil {
		t.Logf("the replacement's resident memory under this load: %.0f MiB", rss/(1<<20))
	}
	return drained - atTerm
}

// load is dry-run creations of one object sent by clients in a loop, each
// an admission through the webhook.
type load struct {
	calls, failures atomic.Int64
	done            chan struct{}
	wg              sync.WaitGroup
}

// startLoad starts clients that create body with dry runs until stop; the
// first failures are reported, all are counted.
func startLoad(t *testing.T, ctx context.Context, body []byte, clients int) *load {
	l := &load{done: make(chan struct{})}
	for range clients {
		l.wg.Go(func() {
			for {
				select {
				case <-l.done:
					return
				default:
				}
				l.calls.Add(1)
				if err := tryCreateContentJSON(ctx, body, true); err != nil && l.failures.Add(1) <= 5 {
					t.Errorf("admission failed at %s: %v", time.Now().Format("15:04:05.000"), err)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
	return l
}

// stop ends the load and returns its counts.
func (l *load) stop() (calls, failures int64) {
	close(l.done)
	l.wg.Wait()
	return l.calls.Load(), l.failures.Load()
}

// registerURL registers url (a webhook's /volumesnapshot path), trusted
// through caPEM, for CREATE and UPDATE of VolumeSnapshotContents labeled
// webhookLabel=label, with failurePolicy Fail, and waits until
// kube-apiserver calls it. It returns the configuration's name; the test
// deletes it.
func registerURL(t *testing.T, ctx context.Context, label, url string, caPEM []byte) string {
	t.Helper()
	name := "e2e-" + label
	if err := world.RegisterValidatingHook(ctx, localenv.ValidatingHook{Config: name, Hook: "validation-webhook.snapshot.storage.k8s.io",
		URL: url + "/volumesnapshot", CABundle: caPEM, Labels: map[string]string{webhookLabel: label},
		Rule: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{"snapshot.storage.k8s.io"}, APIVersions: []string{"v1"},
				Resources: []string{"volumesnapshotcontents"}},
		}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = world.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	probe := contentJSON(label, label+"-probe", "probe.example.com", "", "", "")
	waitFor(t, "kube-apiserver to call the webhook", func(ctx context.Context) bool { return tryCreateContentJSON(ctx, probe, true) != nil })
	return name
}

// readyz is the status of wh's /readyz, 0 when it does not answer.
func readyz(wh *localenv.SnapshotWebhook) int {
	resp, err := http.Get("http://" + wh.HTTPAddr + "/readyz") //nolint:noctx // local test endpoint
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// admissions is wh's count of allowed content creations, an error when it
// does not answer (it is stopping).
func admissions(wh *localenv.SnapshotWebhook) (float64, error) {
	return scrapeSeries(wh.HTTPAddr, admissionsSeries("volumesnapshotcontents", "allowed"))
}

// forwarder stands for a Service in front of the webhook as kube-proxy
// makes one: each new connection goes to the endpoint of the moment, and
// keeps the endpoint it was opened to after the endpoints move
// (conntrack).
type forwarder struct {
	listener net.Listener
	mu       sync.Mutex
	endpoint string // host:port
}

// newForwarder forwards to endpoint (https://host:port) until the test ends.
func newForwarder(t *testing.T, endpoint string) *forwarder {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &forwarder{listener: listener}
	f.set(endpoint)
	go f.serve()
	t.Cleanup(func() { listener.Close() })
	return f
}

// url is where kube-apiserver calls the Service.
func (f *forwarder) url() string { return "https://" + f.listener.Addr().String() }

// move sends new connections to endpoint (https://host:port) once after
// has passed.
func (f *forwarder) move(endpoint string, after time.Duration) {
	time.AfterFunc(after, func() { f.set(endpoint) })
}

func (f *forwarder) set(endpoint string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.endpoint = strings.TrimPrefix(endpoint, "https://")
}

func (f *forwarder) serve() {
	for {
		client, err := f.listener.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		endpoint := f.endpoint
		f.mu.Unlock()
		go relay(client, endpoint)
	}
}

// relay copies client's connection to endpoint and back until either
// side closes it.
func relay(client net.Conn, endpoint string) {
	defer client.Close()
	backend, err := net.DialTimeout("tcp", endpoint, 5*time.Second)
	if err != nil {
		return
	}
	defer backend.Close()
	go func() {
		_, _ = io.Copy(backend, client)
		_ = backend.(*net.TCPConn).CloseWrite()
	}()
	_, _ = io.Copy(client, backend)
}
