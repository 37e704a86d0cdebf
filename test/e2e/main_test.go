//go:build e2e

// Package e2e runs the sidecar binary against a real local control plane
// (test/cluster), the local CSI driver with real data (test/localdriver),
// the real snapshot-controller and csi-snapshotter, and the real
// VolumeSnapshot and ReferenceGrant CRDs. Run it with `make test-e2e`.
package e2e

import (
	"context"
	"os"
	"testing"

	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// world is the environment every case shares: one control plane, the local
// driver with its csi-snapshotter, and one sidecar with the gate on.
var world *localenv.Env

func TestMain(m *testing.M) {
	os.Exit(localenv.RunSuite(m, "e2e", "E2E_KEEP", localenv.Config{}, func(_ context.Context, env *localenv.Env) error {
		world = env
		return nil
	}))
}
