package snapshotwebhook

import (
	"errors"
	"os"
	"time"

	"github.com/spf13/pflag"

	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/command"
	"github.com/xns-csi/csi-provisioner/internal/shared/features"
)

// Component is the webhook's name: its client's user agent, its log's
// first line.
const Component = "snapshot-validation-webhook"

// Options are the webhook's command-line settings: the flags of
// external-snapshotter's last snapshot-validation-webhook (v8.1), under
// its names and defaults, plus --http-endpoint and --metrics-path, and for
// the DELETE guard the flags that say how the csi-provisioner sidecars are
// set (--feature-gates, --cross-namespace-snapshot). See AddFlags.
type Options struct {
	// CertFile and KeyFile are --tls-cert-file and --tls-private-key-file,
	// the serving certificate (followed by its intermediates) and key,
	// reloaded when they change.
	CertFile string
	KeyFile  string
	// Port is --port, the HTTPS port kube-apiserver calls.
	Port int
	// ClientCAFile is --client-ca-file: when set, every caller must
	// present a client certificate signed by one of its CAs (seed 004,
	// "Authentication"), as kube-apiserver does when its admission
	// configuration gives it one for the webhook; read at start.
	ClientCAFile string
	// EnableHTTP2 is --enable-http2. Off by default, as in
	// controller-runtime since the HTTP/2 rapid-reset and stream
	// cancellation CVEs (CVE-2023-44487, CVE-2023-39325): kube-apiserver
	// calls webhooks over HTTP/1.1 just as well.
	EnableHTTP2 bool
	// Limits are --max-requests-in-flight, --max-request-bytes and
	// --max-request-bytes-in-flight.
	Limits Limits
	// ShutdownDelay is --shutdown-delay-duration: after SIGTERM the
	// webhook keeps answering for this long, not ready, closing each
	// connection after its response, while the endpoints move to other
	// replicas (Server.Serve). 0, the default, stops at once, as
	// kube-apiserver's flag of that name does; deploy/webhook sets it.
	ShutdownDelay time.Duration
	// Kubeconfig is --kubeconfig; without it the in-cluster configuration
	// is used. The webhook reads snapshot classes, nothing else.
	Kubeconfig string
	// PreventVolumeModeConversion is --prevent-volume-mode-conversion:
	// VolumeSnapshotContents' spec.sourceVolumeMode is immutable.
	PreventVolumeModeConversion bool
	// EnableVolumeGroupSnapshotWebhook is
	// --enable-volume-group-snapshot-webhook: the default-class rule also
	// covers VolumeGroupSnapshotClasses.
	EnableVolumeGroupSnapshotWebhook bool
	// GuardCrossNamespaceRestores is --guard-cross-namespace-restores: the
	// DELETE of a VolumeSnapshot is denied while a claim in another
	// namespace is being provisioned from it (see DeleteGuard). It needs
	// the webhook to be registered for DELETE of volumesnapshots
	// (deploy/webhook/guard) and to read claims, volumes, ReferenceGrants
	// and VolumeSnapshotLinks.
	GuardCrossNamespaceRestores bool
	// CrossNamespaceSnapshot is --cross-namespace-snapshot, as the
	// sidecars have it: the guard counts claims restoring through
	// VolumeSnapshotLinks.
	CrossNamespaceSnapshot bool

	// HTTPEndpoint is --http-endpoint, plain HTTP for metrics, /healthz
	// and /readyz; empty disables it (/readyz is also served over HTTPS).
	HTTPEndpoint string
	MetricsPath  string

	ShowVersion bool

	// Logging holds -v, --vmodule, --logging-format and the other
	// component-base logging flags.
	Logging *logsapi.LoggingConfiguration
	// FeatureGate holds --feature-gates, the sidecar's gates (and the
	// logging gates): with CrossNamespaceSourceProvisioning the guard counts
	// claims whose dataSourceRef names another namespace.
	FeatureGate featuregate.MutableVersionedFeatureGate
}

// NewOptions returns the defaults, which are the flags' defaults.
func NewOptions() *Options {
	return &Options{
		Port:                        443,
		Limits:                      DefaultLimits(),
		PreventVolumeModeConversion: true,
		MetricsPath:                 "/metrics",
		Logging:                     logsapi.NewLoggingConfiguration(),
		FeatureGate:                 features.NewGate(),
	}
}

// ParseFlags parses the webhook's command line (args without the program
// name) into Options and validates them: the one entry point of
// cmd/snapshot-validation-webhook. -h and --help print the usage to stderr
// and return pflag.ErrHelp; parse and validation errors are returned, not
// printed.
func ParseFlags(args []string) (*Options, error) {
	return command.ParseFlags(Component, args, os.Stderr, NewOptions())
}

// AddFlags binds every option to a flag of fs. The names, types and
// defaults of external-snapshotter's snapshot-validation-webhook are kept,
// so its manifests work unchanged.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.CertFile, "tls-cert-file", o.CertFile, "File containing the x509 Certificate for HTTPS. (CA cert, if any, concatenated after server cert). Required. Reloaded when it changes.")
	fs.StringVar(&o.KeyFile, "tls-private-key-file", o.KeyFile, "File containing the x509 private key matching --tls-cert-file. Required. Reloaded when it changes.")
	fs.IntVar(&o.Port, "port", o.Port, "Secure port that the webhook listens on.")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "If set, every caller must present a client certificate signed by one of the CAs in this PEM file (configure kube-apiserver's AdmissionConfiguration with a kubeconfig that gives it one). Read at start. The default serves callers without a certificate.")
	fs.BoolVar(&o.EnableHTTP2, "enable-http2", o.EnableHTTP2, "Serve HTTP/2 as well as HTTP/1.1. Off by default, as HTTP/2's rapid reset and stream cancellation attacks (CVE-2023-44487, CVE-2023-39325) cost a server more than HTTP/1.1 connections do.")
	fs.IntVar(&o.Limits.MaxInFlight, "max-requests-in-flight", o.Limits.MaxInFlight, "Admission requests served at once; more are answered at once with 429 Too Many Requests (kube-apiserver then applies the webhook's failurePolicy).")
	fs.Int64Var(&o.Limits.MaxBodyBytes, "max-request-bytes", o.Limits.MaxBodyBytes, "Largest request body, in bytes; a longer one is answered 413. The default holds an update of the largest object etcd stores by default (1.5 MiB) with its old object.")
	fs.Int64Var(&o.Limits.MaxBodyBytesInFlight, "max-request-bytes-in-flight", o.Limits.MaxBodyBytesInFlight, "Bytes of request bodies being received and served at once, counted as they arrive; a request that would go past it is answered 429. With --max-requests-in-flight and --max-connections it bounds the webhook's memory: see docs/webhook.md.")
	fs.IntVar(&o.Limits.MaxConnections, "max-connections", o.Limits.MaxConnections, "Connections open at once; one more is closed as soon as it is accepted. Bounds the memory of connections whose requests are not read yet.")
	fs.DurationVar(&o.ShutdownDelay, "shutdown-delay-duration", o.ShutdownDelay, "After SIGTERM, keep answering admission requests for this long, reporting not ready on /readyz and closing each connection after its response, so that calls routed to this replica while endpoints move to others are answered; then stop accepting and finish the requests in flight (up to 10s more). Keep the pod's terminationGracePeriodSeconds above its preStop delay plus both.")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig file to use for volumesnapshotclasses. Required only when running out of cluster.")
	fs.BoolVar(&o.PreventVolumeModeConversion, "prevent-volume-mode-conversion", o.PreventVolumeModeConversion, "Prevents an unauthorized user from modifying the volume mode when creating a PVC from an existing VolumeSnapshot: VolumeSnapshotContents' spec.sourceVolumeMode is immutable.")
	fs.BoolVar(&o.EnableVolumeGroupSnapshotWebhook, "enable-volume-group-snapshot-webhook", o.EnableVolumeGroupSnapshotWebhook, "Enables webhook for VolumeGroupSnapshotClass: at most one default class per driver.")
	fs.BoolVar(&o.GuardCrossNamespaceRestores, "guard-cross-namespace-restores", o.GuardCrossNamespaceRestores, "Deny the deletion of a VolumeSnapshot while a PersistentVolumeClaim the snapshot-controller does not wait for (in another namespace, naming dataSourceRef.namespace, or through a VolumeSnapshotLink), allowed by a ReferenceGrant and handed to a provisioner, is being provisioned from it and the snapshot carries the provisioner's source-protection finalizer (the snapshot-controller would delete its content and backend snapshot under the restore). Needs the DELETE rule of deploy/overlays/webhook-guard and its RBAC, and --feature-gates=CrossNamespaceSourceProvisioning=true and/or --cross-namespace-snapshot set as your sidecars are set.")
	fs.BoolVar(&o.CrossNamespaceSnapshot, "cross-namespace-snapshot", o.CrossNamespaceSnapshot, "With --guard-cross-namespace-restores: count claims whose dataSourceRef is a VolumeSnapshotLink to the snapshot, as csi-provisioner sidecars with --cross-namespace-snapshot restore them. Set it as your sidecars are set.")
	fs.StringVar(&o.HTTPEndpoint, "http-endpoint", o.HTTPEndpoint, "The TCP network address where the HTTP server for diagnostics, including metrics, /healthz and /readyz, will listen (example: `:8080`). The default is empty string, which means the server is disabled.")
	fs.StringVar(&o.MetricsPath, "metrics-path", o.MetricsPath, "The HTTP path where prometheus metrics will be exposed.")
	fs.BoolVar(&o.ShowVersion, "version", o.ShowVersion, "Show version.")
	o.FeatureGate.AddFlag(fs)
	logsapi.AddFlags(o.Logging, fs)
}

// Validate checks the options. It changes nothing; ApplyLogging does.
func (o *Options) Validate() error {
	var errs []error
	if o.CertFile == "" || o.KeyFile == "" {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file are required"))
	}
	if o.Port < 1 || o.Port > 65535 {
		errs = append(errs, errors.New("--port must be between 1 and 65535"))
	}
	errs = append(errs, o.Limits.validate()...)
	if o.ShutdownDelay < 0 {
		errs = append(errs, errors.New("--shutdown-delay-duration must not be negative"))
	}
	if o.HTTPEndpoint != "" && (o.MetricsPath == "" || o.MetricsPath[0] != '/') {
		errs = append(errs, errors.New("--metrics-path must start with /"))
	}
	if o.GuardCrossNamespaceRestores && !o.guardsClaims() {
		errs = append(errs, errors.New("--guard-cross-namespace-restores guards the restores of sidecars that provision across namespaces: "+
			"set --feature-gates=CrossNamespaceSourceProvisioning=true and/or --cross-namespace-snapshot as your csi-provisioner sidecars are set"))
	}
	if err := logsapi.Validate(o.Logging, o.FeatureGate, nil).ToAggregate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// StopTimeout is the longest the webhook takes to exit after SIGTERM: the
// drain (--shutdown-delay-duration), then the wait for the requests in
// flight. A pod's terminationGracePeriodSeconds must cover it after its
// preStop hook, or the kubelet kills the webhook mid-request.
func (o *Options) StopTimeout() time.Duration { return o.ShutdownDelay + shutdownTimeout }

// VersionRequested reports --version.
func (o *Options) VersionRequested() bool { return o.ShowVersion }

// ApplyLogging configures the process-wide logger from -v, --vmodule and
// --logging-format. Call it once, after Validate.
func (o *Options) ApplyLogging() error {
	return logsapi.ValidateAndApply(o.Logging, o.FeatureGate)
}

// guardsClaims reports whether the sidecars, as the flags describe them,
// restore any claim from another namespace: through dataSourceRef.namespace
// or through VolumeSnapshotLinks.
func (o *Options) guardsClaims() bool {
	return features.CrossNamespaceEnabled(o.FeatureGate) || o.CrossNamespaceSnapshot
}
