package validator

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/xns-csi/csi-provisioner/internal/shared/features"
)

// TestUpstreamManifestArgsParse: the arguments of the upstream validator's
// deploy/kubernetes/setup-data-source-validator.yaml are accepted as they
// are, and its flags keep their defaults.
func TestUpstreamManifestArgsParse(t *testing.T) {
	opts, err := parseFlags([]string{"--v=5", "--leader-election=false", "--http-endpoint=:8080"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if opts.HTTPEndpoint != ":8080" || opts.LeaderElection.Enabled || opts.Logging.Verbosity != 5 {
		t.Errorf("http-endpoint %q, leader-election %v, v %v; want :8080, false, 5", opts.HTTPEndpoint, opts.LeaderElection.Enabled, opts.Logging.Verbosity)
	}
	if opts.WorkerThreads != 10 || opts.MetricsPath != "/metrics" || opts.LeaderElection.LeaseDuration != 15*time.Second {
		t.Errorf("worker-threads %d, metrics-path %q, lease %v; want upstream's 10, /metrics, 15s", opts.WorkerThreads, opts.MetricsPath, opts.LeaderElection.LeaseDuration)
	}
}

func TestTheSidecarsSettingsParse(t *testing.T) {
	opts, err := parseFlags([]string{"--feature-gates=CrossNamespaceSourceProvisioning=true", "--cross-namespace-snapshot",
		"--leader-election", "--resync-period=0", "--kube-api-qps=20"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !features.CrossNamespaceEnabled(opts.FeatureGate) || !opts.CrossNamespaceSnapshot || !opts.LeaderElection.Enabled ||
		opts.ResyncPeriod != 0 || opts.KubeAPIQPS != 20 {
		t.Errorf("Options = %+v", opts)
	}
}

func TestInvalidFlags(t *testing.T) {
	for name, tt := range map[string]struct {
		args    []string
		wantErr string
	}{
		"no worker":                  {[]string{"--worker-threads=0"}, "--worker-threads"},
		"a negative resync period":   {[]string{"--resync-period=-1s"}, "--resync-period"},
		"a renew deadline too long":  {[]string{"--leader-election", "--leader-election-renew-deadline=20s"}, "--leader-election-renew-deadline"},
		"a flag the validator lacks": {[]string{"--csi-address=/csi.sock"}, "unknown flag"},
		"a stray argument":           {[]string{"extra"}, "unexpected arguments"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := parseFlags(tt.args, io.Discard); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseFlags(%q) = %v, want an error containing %q", tt.args, err, tt.wantErr)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	var out strings.Builder
	if _, err := parseFlags([]string{"--help"}, &out); !errors.Is(err, pflag.ErrHelp) {
		t.Fatalf("--help = %v, want pflag.ErrHelp", err)
	}
	for _, flag := range []string{"--kubeconfig", "--resync-period", "--leader-election-namespace", "--http-endpoint", "--metrics-path", "--version", "--cross-namespace-snapshot"} {
		if !strings.Contains(out.String(), flag) {
			t.Errorf("--help does not list %s", flag)
		}
	}
}
