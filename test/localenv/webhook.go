package localenv

import (
	"context"
	"path/filepath"
	"strconv"

	"github.com/xns-csi/csi-provisioner/test/cluster"
)

// SnapshotWebhookServiceAccount is the ServiceAccount of
// deploy/webhook/rbac.yaml (namespace default), as which the snapshot
// validation webhook runs.
const SnapshotWebhookServiceAccount = "snapshot-validation-webhook"

// SnapshotWebhook is one snapshot-validation-webhook process: URL is where
// kube-apiserver reaches it (https://127.0.0.1:<port>), HTTPAddr its
// metrics and health checks.
type SnapshotWebhook struct {
	*cluster.Process
	URL      string
	HTTPAddr string
}

// SnapshotWebhookBinary is this project's webhook (make build).
func (e *Env) SnapshotWebhookBinary() string {
	return filepath.Join(e.Root, "bin", "snapshot-validation-webhook")
}

// StartSnapshotWebhook starts the webhook as the ServiceAccount of
// deploy/webhook/rbac.yaml, which it applies (the shipped RBAC is what is
// tested), serving certFile and keyFile on a free port of 127.0.0.1, with
// its HTTP endpoint on another and extra arguments, and waits until it
// answers /healthz. Env.Stop stops it.
func (e *Env) StartSnapshotWebhook(ctx context.Context, name, certFile, keyFile string, extra ...string) (*SnapshotWebhook, error) {
	if _, err := e.Cluster.Kubectl(ctx, "apply", "-f", filepath.Join(e.Root, "deploy", "webhook", "rbac.yaml")); err != nil {
		return nil, err
	}
	kubeconfig, err := e.serviceAccountKubeconfig(ctx, "default", SnapshotWebhookServiceAccount)
	if err != nil {
		return nil, err
	}
	ports := make([]int, 2)
	for i := range ports {
		if ports[i], err = cluster.FreePort(); err != nil {
			return nil, err
		}
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[1])
	args := append([]string{"--kubeconfig=" + kubeconfig, "--tls-cert-file=" + certFile, "--tls-private-key-file=" + keyFile,
		"--port=" + strconv.Itoa(ports[0]), "--http-endpoint=" + addr}, extra...)
	p, err := cluster.StartProcess(name, e.SnapshotWebhookBinary(), args, e.Work)
	if err != nil {
		return nil, err
	}
	e.processes = append(e.processes, p)
	w := &SnapshotWebhook{Process: p, URL: "https://127.0.0.1:" + strconv.Itoa(ports[0]), HTTPAddr: addr}
	return w, cluster.WaitHealthy(ctx, "http://"+addr+"/healthz", "", p)
}
