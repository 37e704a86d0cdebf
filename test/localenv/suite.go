package localenv

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// RunSuite is the body of the TestMain of a suite on the local
// environment: it starts the environment in a new temporary directory
// (kept when the environment variable keepVar is set), hands it to setup
// (which keeps it for the tests and may install more), runs the tests,
// stops every process by PID and returns the exit code. name prefixes its
// messages and the directory.
func RunSuite(m *testing.M, name, keepVar string, cfg Config, setup func(context.Context, *Env) error) int {
	code, err := runSuite(m, name, keepVar, cfg, setup)
	if err != nil {
		fmt.Fprintln(os.Stderr, name, "setup failed:", err)
		return 1
	}
	return code
}

func runSuite(m *testing.M, name, keepVar string, cfg Config, setup func(context.Context, *Env) error) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, err := RepoRoot()
	if err != nil {
		return 0, err
	}
	work, err := os.MkdirTemp("", "csi-provisioner-"+name+"-")
	if err != nil {
		return 0, err
	}
	if os.Getenv(keepVar) == "" {
		defer os.RemoveAll(work)
	}
	fmt.Fprintln(os.Stderr, name+": state and logs in", work)
	cfg.Root, cfg.Work = root, work
	env, err := Start(ctx, cfg)
	if env != nil {
		defer env.Stop()
	}
	if err != nil {
		return 0, err
	}
	if err := setup(ctx, env); err != nil {
		return 0, err
	}
	return m.Run(), nil
}
