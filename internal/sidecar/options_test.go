package sidecar

import (
	"errors"
	"io"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/xns-csi/csi-provisioner/internal/shared/features"
)

// fakeEnv is a fake environment for parseFlags.
type fakeEnv map[string]string

func (e fakeEnv) get(name string) string { return e[name] }

// parse parses args in the environment e, as ParseFlags does in the
// process's.
func parse(t *testing.T, e fakeEnv, args ...string) (*Options, error) {
	t.Helper()
	return parseFlags(args, e.get, io.Discard)
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
		{"gates given in two flags add up, as in the EBS chart", []string{"--feature-gates=Topology=true", "--feature-gates=CrossNamespaceVolumeDataSource=true"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts, err := parse(t, nil, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got := features.CrossNamespaceEnabled(opts.FeatureGate); got != tt.want {
				t.Errorf("CrossNamespaceEnabled = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name  string
		env   fakeEnv
		args  []string
		check func(*Options) bool
	}{
		{name: "--kube-api-qps takes a fraction, as upstream's float64",
			args:  []string{"--kube-api-qps=20.5", "--kube-api-burst=100"},
			check: func(o *Options) bool { return o.KubeAPIQPS == 20.5 && o.KubeAPIBurst == 100 }},
		{name: "--leader-election-labels become the Lease's labels",
			args: []string{"--leader-election", "--leader-election-labels=a:b,c:d", "--leader-election-namespace=kube-system"},
			check: func(o *Options) bool {
				return o.LeaderElection.Enabled && o.LeaderElection.Namespace == "kube-system" &&
					maps.Equal(o.LeaderElection.Labels, map[string]string{"a": "b", "c": "d"})
			}},
		{name: "--finalizer-threads is an alias of --cloning-protection-threads",
			args:  []string{"--finalizer-threads=3"},
			check: func(o *Options) bool { return o.FinalizerThreads == 3 }},
		{name: "of --cloning-protection-threads and --finalizer-threads the last one wins",
			args:  []string{"--finalizer-threads=3", "--cloning-protection-threads=7"},
			check: func(o *Options) bool { return o.FinalizerThreads == 7 }},
		{name: "KUBECONFIG wins over --kubeconfig, as upstream",
			env: fakeEnv{"KUBECONFIG": "/env/config"}, args: []string{"--kubeconfig=/flag/config"},
			check: func(o *Options) bool { return o.Kubeconfig == "/env/config" && o.KubeconfigFromEnv }},
		{name: "--kubeconfig is used without KUBECONFIG",
			args: []string{"--kubeconfig=/flag/config", "--master=https://api:6443"},
			check: func(o *Options) bool {
				return o.Kubeconfig == "/flag/config" && !o.KubeconfigFromEnv && o.Master == "https://api:6443"
			}},
		{name: "the deprecated --metrics-address is the HTTP address",
			args:  []string{"--metrics-address=:9000", "--metrics-path=/m"},
			check: func(o *Options) bool { return o.HTTPAddress() == ":9000" && o.MetricsPath == "/m" }},
		{name: "--node-deployment takes the node from NODE_NAME",
			env: fakeEnv{"NODE_NAME": "node-1"}, args: []string{"--node-deployment", "--node-deployment-base-delay=1s", "--node-deployment-max-delay=2s"},
			check: func(o *Options) bool {
				n := o.NodeDeployment
				return n.Enabled && n.NodeName == "node-1" && n.BaseDelay == time.Second && n.MaxDelay == 2*time.Second
			}},
		{name: "--enable-capacity takes its pod from NAMESPACE and POD_NAME",
			env: fakeEnv{"NAMESPACE": "ns", "POD_NAME": "pod"}, args: []string{"--enable-capacity", "--capacity-threads=2", "--kube-api-capacity-qps=0.5"},
			check: func(o *Options) bool {
				c := o.Capacity
				return c.Enabled && c.Namespace == "ns" && c.PodName == "pod" && c.Threads == 2 && c.KubeAPIQPS == 0.5
			}},
		{name: "--snapshot-orphan-sweep-interval=0 is accepted",
			args:  []string{"--snapshot-orphan-sweep-interval=0"},
			check: func(o *Options) bool { return o.OrphanSweep.Interval == 0 }},
		{name: "-v=5 works, as in the hostpath driver's manifests",
			args:  []string{"-v=5"},
			check: func(o *Options) bool { return o.Logging.Verbosity == 5 }},
		{name: "VolumeAttributesClass not set is left to the cluster's API, as upstream",
			args:  []string{"--feature-gates=Topology=true"},
			check: func(o *Options) bool { return o.Volume.VolumeAttributesClass == nil }},
		{name: "VolumeAttributesClass=false, as the EBS chart sets it, turns the feature off",
			args: []string{"--feature-gates=VolumeAttributesClass=false"},
			check: func(o *Options) bool {
				return o.Volume.VolumeAttributesClass != nil && !*o.Volume.VolumeAttributesClass
			}},
		{name: "VolumeAttributesClass=true turns it on whatever the cluster serves",
			args:  []string{"--feature-gates=VolumeAttributesClass=true"},
			check: func(o *Options) bool { return o.Volume.VolumeAttributesClass != nil && *o.Volume.VolumeAttributesClass }},
		{name: "--version is reported",
			args:  []string{"--version"},
			check: func(o *Options) bool { return o.ShowVersion }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // parseFlags serializes itself
			opts, err := parse(t, tt.env, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(opts) {
				t.Errorf("unexpected options after %q: %+v", tt.args, *opts)
			}
		})
	}
}

func TestParseFlagsRefuses(t *testing.T) {
	tests := []struct {
		name    string
		env     fakeEnv
		args    []string
		wantErr string
	}{
		{name: "an unknown flag", args: []string{"--no-such-flag"}, wantErr: "unknown flag"},
		{name: "a long flag with one dash, as upstream's pflag does", args: []string{"-csi-address=/csi/csi.sock"}, wantErr: "unknown shorthand"},
		{name: "an unknown gate", args: []string{"--feature-gates=NoSuchGate=true"}, wantErr: "NoSuchGate"},
		{name: "a negative thread count, as upstream's uint", args: []string{"--worker-threads=-1"}, wantErr: "--worker-threads"},
		{name: "a stray argument", args: []string{"--csi-address", "/a", "/b"}, wantErr: "unexpected arguments"},
		{name: "a zero UUID length, which would give every claim the same volume",
			args: []string{"--volume-name-uuid-length=0"}, wantErr: "--volume-name-uuid-length"},
		{name: "a backoff that starts above its maximum",
			args: []string{"--retry-interval-start=10m", "--retry-interval-max=1m"}, wantErr: "--retry-interval-start"},
		{name: "a renew deadline not below the lease duration",
			args: []string{"--leader-election", "--leader-election-renew-deadline=20s"}, wantErr: "renew-deadline"},
		{name: "no worker", args: []string{"--worker-threads=0"}, wantErr: "--worker-threads"},
		{name: "both --metrics-address and --http-endpoint",
			args: []string{"--metrics-address=:1", "--http-endpoint=:2"}, wantErr: "only one of --metrics-address and --http-endpoint"},
		{name: "--node-deployment without NODE_NAME", args: []string{"--node-deployment"}, wantErr: "NODE_NAME"},
		{name: "--enable-capacity without NAMESPACE",
			env: fakeEnv{"POD_NAME": "p"}, args: []string{"--enable-capacity"}, wantErr: "NAMESPACE"},
		{name: "--enable-capacity with an owner but without POD_NAME",
			env: fakeEnv{"NAMESPACE": "n"}, args: []string{"--enable-capacity"}, wantErr: "POD_NAME"},
		{name: "a negative orphan sweep interval",
			args: []string{"--snapshot-orphan-sweep-interval=-1s"}, wantErr: "--snapshot-orphan-sweep-interval"},
		{name: "an unknown logging format", args: []string{"--logging-format=xml"}, wantErr: "xml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parse(t, tt.env, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("parse(%q) = %v, want an error about %s", tt.args, err, tt.wantErr)
			}
		})
	}
}

func TestParseFlagsAccepts(t *testing.T) {
	tests := []struct {
		name string
		env  fakeEnv
		args []string
	}{
		{name: "the defaults"},
		{name: "--enable-capacity without an owner needs no POD_NAME",
			env: fakeEnv{"NAMESPACE": "n"}, args: []string{"--enable-capacity", "--capacity-ownerref-level=-1"}},
		{name: "JSON logs", args: []string{"--logging-format=json"}},
		{name: "Topology=false, as upstream does not lock the gate", args: []string{"--feature-gates=Topology=false"}},
		{name: "--automaxprocs", args: []string{"--automaxprocs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := parse(t, tt.env, tt.args...); err != nil {
				t.Fatalf("parse(%q) = %v", tt.args, err)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	var out strings.Builder
	_, err := parseFlags([]string{"--help"}, fakeEnv{}.get, &out)
	if !errors.Is(err, pflag.ErrHelp) {
		t.Fatalf("parse(--help) = %v, want pflag.ErrHelp", err)
	}
	for _, want := range []string{"--cloning-protection-threads", "--leader-election-labels", "--automaxprocs", "--logging-format"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the usage does not mention %s", want)
		}
	}
	if strings.Contains(out.String(), "--finalizer-threads") {
		t.Error("the usage lists the deprecated --finalizer-threads")
	}
}

// The common flags are process-global (csi-lib-utils): a parse must not
// see the values of the one before, and the defaults must be NewOptions'.
func TestParseFlagsStartsFromTheDefaults(t *testing.T) {
	if _, err := parse(t, nil, "--kubeconfig=/k", "--csi-address=/s", "--leader-election", "--leader-election-labels=a:b",
		"--kube-api-qps=50", "--http-endpoint=:1", "--version", "--cloning-protection-threads=9"); err != nil {
		t.Fatal(err)
	}
	got, err := parse(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := NewOptions()
	got.FeatureGate, got.Logging, want.FeatureGate, want.Logging = nil, nil, nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults after an earlier parse:\n got %+v\nwant %+v", *got, *want)
	}
}
