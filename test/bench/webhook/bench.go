package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/test/cluster"
	"github.com/xns-csi/csi-provisioner/test/localenv"
	"github.com/xns-csi/csi-provisioner/test/servingcerts"
)

// benchLabel marks the bench's objects; the webhook configuration selects
// only them.
const benchLabel = "bench.xns-csi.io/snapshot-webhook"

const hookConfig = "bench-snapshot-webhook"

// hookName is the webhook's name in the configuration, which
// kube-apiserver's metrics label its calls with.
const hookName = "validation-webhook.snapshot.storage.k8s.io"

// step is one measured step: a rate, with or without the webhook.
type step struct {
	rate    int
	webhook bool
	load    loadResult
	// hook is the webhook's own count and timing, apiServer
	// kube-apiserver's timing of its calls to it.
	hook, apiServer hookDelta
}

// measure starts the control plane and the webhook and runs every step.
func measure(ctx context.Context, o options) ([]step, error) {
	root, err := localenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	env, wh, ca, err := start(ctx, root, o.work, o.webhookArgs)
	if env != nil {
		defer env.Stop()
	}
	if err != nil {
		return nil, err
	}
	config, err := env.Cluster.RESTConfig(cluster.Admin)
	if err != nil {
		return nil, err
	}
	config.QPS, config.Burst = 5000, 5000
	snaps, err := snapclientset.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	g := &generator{snaps: snaps, workers: o.workers}
	metricsURL := "http://" + wh.HTTPAddr + "/metrics"
	// The control plane's first seconds under load are slower than the
	// rest (connections, caches, the controllers settling): not measured.
	logf("warm-up: %d/s for 5s", o.rates[0])
	g.run(ctx, o.rates[0], 5*time.Second)
	var steps []step
	for _, rate := range o.rates {
		for _, registered := range []bool{false, true} {
			if registered {
				if err := register(ctx, env, g, wh, ca, metricsURL); err != nil {
					return steps, err
				}
			}
			logf("step: %d/s for %s, webhook registered: %t", rate, o.duration, registered)
			before, err := scrape(ctx, metricsURL)
			if err != nil {
				return steps, err
			}
			apiBefore, err := scrapeAPIServer(ctx, env.Kube, hookName)
			if err != nil {
				return steps, err
			}
			load := g.run(ctx, rate, o.duration)
			after, err := scrape(ctx, metricsURL)
			if err != nil {
				return steps, err
			}
			apiAfter, err := scrapeAPIServer(ctx, env.Kube, hookName)
			if err != nil {
				return steps, err
			}
			steps = append(steps, step{rate: rate, webhook: registered, load: load, hook: after.since(before), apiServer: apiAfter.since(apiBefore)})
			if registered {
				if err := env.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, hookConfig, metav1.DeleteOptions{}); err != nil {
					return steps, err
				}
				time.Sleep(2 * time.Second) // kube-apiserver's webhook informer
			}
			if ctx.Err() != nil {
				return steps, ctx.Err()
			}
		}
	}
	return steps, nil
}

// start brings up the local control plane with the snapshot CRDs (as the
// e2e tests do) and the webhook binary serving a certificate of a CA made
// here. The returned Env, if not nil, must be stopped.
func start(ctx context.Context, root, work string, webhookArgs []string) (*localenv.Env, *localenv.SnapshotWebhook, *servingcerts.CA, error) {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, nil, nil, err
	}
	if _, err := os.Stat(filepath.Join(root, "bin", "snapshot-validation-webhook")); err != nil {
		logf("building bin/snapshot-validation-webhook (make build)")
		cmd := exec.CommandContext(ctx, "make", "build")
		cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, nil, nil, fmt.Errorf("make build: %w", err)
		}
	}
	logf("starting a local cluster (logs in %s)", work)
	env, err := localenv.Start(ctx, localenv.Config{Root: root, Work: work, Progress: func(s string) { logf("  %s", s) }})
	if err != nil {
		return env, nil, nil, err
	}
	ca, err := servingcerts.NewCA()
	if err != nil {
		return env, nil, nil, err
	}
	certs := &servingcerts.SecretVolume{Dir: filepath.Join(work, "webhook-certs")}
	if err := os.MkdirAll(certs.Dir, 0o755); err != nil {
		return env, nil, nil, err
	}
	if err := certs.WriteIssued(ca, 1); err != nil {
		return env, nil, nil, err
	}
	logf("  snapshot-validation-webhook")
	wh, err := env.StartSnapshotWebhook(ctx, "snapshot-validation-webhook", certs.CertFile(), certs.KeyFile(), append([]string{"--v=2"}, webhookArgs...)...)
	return env, wh, ca, err
}

// register registers the webhook for the bench's VolumeSnapshotContents
// and waits until kube-apiserver calls it (its request counter moves).
func register(ctx context.Context, env *localenv.Env, g *generator, wh *localenv.SnapshotWebhook, ca *servingcerts.CA, metricsURL string) error {
	err := env.RegisterValidatingHook(ctx, localenv.ValidatingHook{Config: hookConfig, Hook: hookName,
		URL: wh.URL + "/volumesnapshot", CABundle: ca.PEM, Labels: map[string]string{benchLabel: "true"},
		Rule: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{"snapshot.storage.k8s.io"}, APIVersions: []string{"v1"},
				Resources: []string{"volumesnapshots", "volumesnapshotcontents", "volumesnapshotclasses"}},
		}})
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		before, err := scrape(ctx, metricsURL)
		if err != nil {
			return err
		}
		if err := g.create(ctx); err != nil {
			return fmt.Errorf("probe create: %w", err)
		}
		after, err := scrape(ctx, metricsURL)
		if err != nil {
			return err
		}
		if after.since(before).requests > 0 {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("kube-apiserver did not call the webhook within 30s")
}
