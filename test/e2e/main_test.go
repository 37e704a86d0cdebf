//go:build e2e

// Package e2e runs the sidecar binary against a real local control plane
// (test/cluster), the local CSI driver with real data (test/localdriver),
// the real snapshot-controller and csi-snapshotter, and the real
// VolumeSnapshot and ReferenceGrant CRDs. Run it with `make test-e2e`.
package e2e

import (
	"context"
	"fmt"
	"github.com/xns-csi/csi-provisioner/test/localenv"
	"os"
	"testing"
	"time"
)

// world is the environment every case shares: one control plane, the local
// driver with its csi-snapshotter, and one sidecar with the gate on.
var world *localenv.Env

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup failed:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, err := localenv.RepoRoot()
	if err != nil {
		return 0, err
	}
	work, err := os.MkdirTemp("", "csi-provisioner-e2e-")
	if err != nil {
		return 0, err
	}
	keep := os.Getenv("E2E_KEEP") != ""
	defer func() {
		if !keep {
			os.RemoveAll(work)
		}
	}()
	fmt.Fprintln(os.Stderr, "e2e: state and logs in", work)
	world, err = localenv.Start(ctx, localenv.Config{Root: root, Work: work})
	if world != nil {
		defer world.Stop()
	}
	if err != nil {
		return 0, err
	}
	return m.Run(), nil
}
