package snapshotwebhook

import (
	"io"
	"strings"
	"testing"

	"github.com/xns-csi/csi-provisioner/internal/shared/command"
	"github.com/xns-csi/csi-provisioner/internal/shared/features"
)

// The arguments of external-snapshotter's deploy/kubernetes/webhook-example
// are accepted as they are, and the flags keep its defaults.
func TestUpstreamManifestArgsParse(t *testing.T) {
	opts, err := parse([]string{"--tls-cert-file=/etc/snapshot-validation-webhook/certs/tls.crt",
		"--tls-private-key-file=/etc/snapshot-validation-webhook/certs/tls.key", "--v=2", "--port=443"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if opts.CertFile != "/etc/snapshot-validation-webhook/certs/tls.crt" || opts.KeyFile != "/etc/snapshot-validation-webhook/certs/tls.key" ||
		opts.Port != 443 || opts.Logging.Verbosity != 2 {
		t.Errorf("Options = %+v", opts)
	}
	if !opts.PreventVolumeModeConversion || opts.EnableVolumeGroupSnapshotWebhook || opts.HTTPEndpoint != "" || opts.MetricsPath != "/metrics" {
		t.Errorf("defaults: prevent-volume-mode-conversion %v, enable-volume-group-snapshot-webhook %v, http-endpoint %q, metrics-path %q; want upstream's true, false, \"\", /metrics",
			opts.PreventVolumeModeConversion, opts.EnableVolumeGroupSnapshotWebhook, opts.HTTPEndpoint, opts.MetricsPath)
	}
}

func parse(args []string, output io.Writer) (*Options, error) {
	return command.ParseFlags(Component, args, output, NewOptions())
}

func TestInvalidFlags(t *testing.T) {
	certs := []string{"--tls-cert-file=c", "--tls-private-key-file=k"}
	for name, tt := range map[string]struct {
		args    []string
		wantErr string
	}{
		"no certificate":          {[]string{"--tls-private-key-file=k"}, "--tls-cert-file"},
		"no key":                  {[]string{"--tls-cert-file=c"}, "--tls-private-key-file"},
		"a port out of range":     {append(certs, "--port=0"), "--port"},
		"a relative metrics path": {append(certs, "--http-endpoint=:8080", "--metrics-path=metrics"), "--metrics-path"},
		"a stray argument":        {append(certs, "extra"), "unexpected arguments"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := parse(tt.args, io.Discard); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parse(%q) = %v, want an error containing %q", tt.args, err, tt.wantErr)
			}
		})
	}
}

func TestVersionNeedsNoCertificate(t *testing.T) {
	opts, err := parse([]string{"--version"}, io.Discard)
	if err != nil || !opts.VersionRequested() {
		t.Errorf("--version: %v, %+v", err, opts)
	}
}

// The DELETE guard is off unless asked for: the default install registers
// no DELETE (deploy/overlays/webhook-guard does). It guards the restores
// of sidecars set as --feature-gates and --cross-namespace-snapshot say,
// and refuses to start when they say the sidecars restore nothing across
// namespaces: a guard that can never deny is a mistake in the flags.
func TestDeleteGuardFlags(t *testing.T) {
	certs := []string{"--tls-cert-file=c", "--tls-private-key-file=k"}
	tests := []struct {
		args                         string
		guard, crossNamespace, links bool
		wantErr                      string
	}{
		{args: ""},
		{args: "--cross-namespace-snapshot", links: true},
		{args: "--guard-cross-namespace-restores", wantErr: "--guard-cross-namespace-restores guards the restores of sidecars"},
		{args: "--guard-cross-namespace-restores --feature-gates=CrossNamespaceSourceProvisioning=true", guard: true, crossNamespace: true},
		{args: "--guard-cross-namespace-restores --cross-namespace-snapshot", guard: true, links: true},
		{args: "--guard-cross-namespace-restores --feature-gates=CrossNamespaceSourceProvisioning=true --cross-namespace-snapshot",
			guard: true, crossNamespace: true, links: true},
		{args: "--feature-gates=NoSuchGate=true", wantErr: "NoSuchGate"},
	}
	for _, tt := range tests {
		opts, err := parse(append(certs, strings.Fields(tt.args)...), io.Discard)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parse(%q) = %v, want an error containing %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parse(%q): %v", tt.args, err)
			continue
		}
		if got := [3]bool{opts.GuardCrossNamespaceRestores, features.CrossNamespaceEnabled(opts.FeatureGate), opts.CrossNamespaceSnapshot}; got != [3]bool{tt.guard, tt.crossNamespace, tt.links} {
			t.Errorf("parse(%q): guard, gate, links = %v, want %v", tt.args, got, [3]bool{tt.guard, tt.crossNamespace, tt.links})
		}
	}
}
