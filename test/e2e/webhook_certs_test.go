//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xns-csi/csi-provisioner/test/localenv"
	"github.com/xns-csi/csi-provisioner/test/servingcerts"
)

// TestE2EWebhookCertsRenewedWithoutFailedAdmission runs the webhook with a
// pair from hack/webhook-certs.sh (its files only, NO_KUBECTL=1; the
// Service's names plus 127.0.0.1, where the local webhook listens),
// registered with failurePolicy Fail and the script's ca.crt as caBundle.
// While kube-apiserver keeps calling it, the script renews the pair (run
// again on the same OUT_DIR) and the new pair is swapped into the Secret
// volume as the kubelet would: the CA is reused, so the caBundle
// registered before verifies the new pair and no admission fails (issue
// 22, defect 5: the script made a new CA on every run, and every renewal
// failed admissions until the caBundle caught up).
func TestE2EWebhookCertsRenewedWithoutFailedAdmission(t *testing.T) {
	ctx := ctxFor(t)
	ns := namespace(t, "webhook-certs")
	driver := ns + ".webhook.example.com"
	out := t.TempDir()
	script := func() (certPEM, keyPEM []byte) {
		t.Helper()
		cmd := exec.CommandContext(ctx, "bash", filepath.Join("..", "..", "hack", "webhook-certs.sh"))
		cmd.Env = append(os.Environ(), "OUT_DIR="+out, "NO_KUBECTL=1", "EXTRA_SANS=IP:127.0.0.1")
		if output, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hack/webhook-certs.sh: %v\n%s", err, output)
		}
		return readFile(t, filepath.Join(out, "tls.crt")), readFile(t, filepath.Join(out, "tls.key"))
	}
	certs := &servingcerts.SecretVolume{Dir: t.TempDir()}
	if err := certs.Write(script()); err != nil {
		t.Fatal(err)
	}
	caPEM := readFile(t, filepath.Join(out, "ca.crt"))
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("the script's ca.crt holds no certificate")
	}

	wh, err := world.StartSnapshotWebhook(ctx, "snapshot-webhook-"+ns, certs.CertFile(), certs.KeyFile(), "--v=2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wh.Stop(5 * time.Second) })
	registerWebhook(t, ctx, ns, wh, caPEM)

	first := servedFingerprint(t, wh, pool)
	admitUnderLoad(t, ctx, ns, driver, wh, func() bool {
		if err := certs.Write(script()); err != nil {
			t.Error(err)
			return false
		}
		return eventuallyTrue(30*time.Second, func() bool {
			served := servedFingerprint(t, wh, pool)
			return served != "" && served != first
		})
	})
	if again := readFile(t, filepath.Join(out, "ca.crt")); string(again) != string(caPEM) {
		t.Error("the renewal made a new CA")
	}
}

// admitUnderLoad keeps kube-apiserver calling the webhook (dry-run
// creations of contents, each an admission, failurePolicy Fail) while
// change runs; change returns once what it changed is in effect, false if
// it never was. No admission may fail, and the webhook must have admitted
// each one that passed.
func admitUnderLoad(t *testing.T, ctx context.Context, ns, driver string, wh *localenv.SnapshotWebhook, change func() bool) {
	t.Helper()
	before := webhookAdmissions(t, wh, "volumesnapshotcontents", "allowed")
	var calls, failures atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		body := contentJSON(ns, ns+"-load", driver, "snap", "", "")
		for {
			select {
			case <-stop:
				return
			default:
			}
			calls.Add(1)
			if err := tryCreateContentJSON(ctx, body, true); err != nil {
				failures.Add(1)
				t.Errorf("admission failed during the change: %v", err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	time.Sleep(time.Second) // load before the change
	changed := change()
	time.Sleep(time.Second) // and after it
	close(stop)
	wg.Wait()
	if !changed {
		t.Error("the change never took effect")
	}
	admitted := webhookAdmissions(t, wh, "volumesnapshotcontents", "allowed") - before
	t.Logf("%d dry-run creations, %v admitted by the webhook, %d failed", calls.Load(), admitted, failures.Load())
	if admitted < float64(calls.Load()-failures.Load()) {
		t.Errorf("the webhook admitted %v of %d creations: kube-apiserver skipped it", admitted, calls.Load())
	}
}

// servedFingerprint identifies the certificate a new TLS connection to the
// webhook gets, verified against pool; "" when none is.
func servedFingerprint(t *testing.T, wh *localenv.SnapshotWebhook, pool *x509.CertPool) string {
	t.Helper()
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	conn, err := dialer.DialContext(context.Background(), "tcp", strings.TrimPrefix(wh.URL, "https://"))
	if err != nil {
		t.Errorf("dialing the webhook: %v", err)
		return ""
	}
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber.String()
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
