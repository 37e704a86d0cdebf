//go:build faults

// Package faults is the fault-injection suite (`make test-faults`): each
// scenario runs its own local driver, csi-snapshotter and sidecar binary on
// one shared local control plane (test/localenv), provisions a burst of
// mixed claims, injects a fault mid-burst (a process killed, the driver's
// fault switches, grants churned, a snapshot deleted, kube-apiserver
// restarted), and ends with one reconciliation of the driver's state with
// the cluster's (reconcile_test.go). docs/reliability.md lists the
// scenarios and the figures of the last run. FAULTS_KEEP=1 keeps the logs.
package faults

import (
	"context"
	"os"
	"testing"

	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// world is the control plane, CRDs and snapshot-controller every scenario
// shares.
var world *localenv.Env

func TestMain(m *testing.M) {
	os.Exit(localenv.RunSuite(m, "faults", "FAULTS_KEEP", localenv.Config{}, func(ctx context.Context, env *localenv.Env) error {
		world = env
		return env.InstallCRDs(ctx, "gateway.networking.k8s.io_referencegrants.yaml")
	}))
}
