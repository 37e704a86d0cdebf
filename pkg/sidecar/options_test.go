package sidecar

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/xns-csi/csi-provisioner/pkg/features"
)

func parse(t *testing.T, args ...string) (*Options, error) {
	t.Helper()
	opts := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return opts, nil
}

func TestFeatureGateFlag(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want bool
	}{
		{"cross-namespace provisioning is off by default", nil, false},
		{"the gate enables it", []string{"--feature-gates=CrossNamespaceSourceProvisioning=true"}, true},
		{"the upstream name enables it too", []string{"--feature-gates=CrossNamespaceVolumeDataSource=true"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := parse(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got := features.CrossNamespaceEnabled(opts.FeatureGate); got != tt.want {
				t.Errorf("CrossNamespaceEnabled = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "the defaults are valid"},
		{name: "a zero UUID length would give every claim the same volume",
			args: []string{"--volume-name-uuid-length=0"}, wantErr: "--volume-name-uuid-length"},
		{name: "a backoff that starts above its maximum is refused",
			args: []string{"--retry-interval-start=10m", "--retry-interval-max=1m"}, wantErr: "--retry-interval-start"},
		{name: "a renew deadline not below the lease duration is refused",
			args: []string{"--leader-election", "--leader-election-renew-deadline=20s"}, wantErr: "renew-deadline"},
		{name: "no worker is refused", args: []string{"--worker-threads=0"}, wantErr: "--worker-threads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := parse(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			err = opts.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want an error about %s", err, tt.wantErr)
			}
		})
	}
}

func TestUpstreamFlagsExist(t *testing.T) {
	opts := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	opts.AddFlags(fs)
	for _, name := range []string{"csi-address", "kubeconfig", "timeout", "worker-threads", "retry-interval-start",
		"retry-interval-max", "volume-name-prefix", "volume-name-uuid-length", "default-fstype", "extra-create-metadata",
		"strict-topology", "immediate-topology", "controller-publish-readonly", "prevent-volume-mode-conversion",
		"kube-api-qps", "kube-api-burst", "leader-election", "leader-election-namespace", "leader-election-lease-duration",
		"leader-election-renew-deadline", "leader-election-retry-period", "http-endpoint", "metrics-path",
		"feature-gates", "v", "version"} {
		if fs.Lookup(name) == nil {
			t.Errorf("flag --%s is missing", name)
		}
	}
}
