package localenv

import (
	"context"
	"path/filepath"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// ValidatingHook is one hook that RegisterValidatingHook registers as a
// ValidatingWebhookConfiguration of its own.
type ValidatingHook struct {
	// Config names the ValidatingWebhookConfiguration, Hook its webhook.
	Config, Hook string
	// URL is where kube-apiserver calls the hook, trusted through CABundle
	// (PEM).
	URL      string
	CABundle []byte
	// Rule says which requests go through the hook.
	Rule admissionregistrationv1.RuleWithOperations
	// Labels, if set, limit the hook to objects that carry them.
	Labels map[string]string
	// FailurePolicy is Fail when nil.
	FailurePolicy *admissionregistrationv1.FailurePolicyType
}

// RegisterValidatingHook registers h with failurePolicy Fail (a failed
// call is a failed request) unless h says otherwise, sideEffects None (so dry-run requests go
// through it too) and a 5 s timeout. The caller deletes the configuration
// (h.Config) when done.
func (e *Env) RegisterValidatingHook(ctx context.Context, h ValidatingHook) error {
	fail, none, timeout := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone, int32(5)
	if h.FailurePolicy != nil {
		fail = *h.FailurePolicy
	}
	hook := admissionregistrationv1.ValidatingWebhook{
		Name:                    h.Hook,
		ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &h.URL, CABundle: h.CABundle},
		Rules:                   []admissionregistrationv1.RuleWithOperations{h.Rule},
		FailurePolicy:           &fail,
		SideEffects:             &none,
		TimeoutSeconds:          &timeout,
		AdmissionReviewVersions: []string{"v1"},
	}
	if len(h.Labels) > 0 {
		hook.ObjectSelector = &metav1.LabelSelector{MatchLabels: h.Labels}
	}
	config := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: h.Config},
		Webhooks:   []admissionregistrationv1.ValidatingWebhook{hook},
	}
	_, err := e.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, config, metav1.CreateOptions{})
	return err
}
