// Package leader runs a component's controllers under leader election, the
// way every binary of this project does: csi-lib-utils' Lease-based leader
// election configured by the --leader-election* flags of the kubernetes-csi
// sidecars, a replica identity unique even when two replicas share a host,
// errors returned instead of the process exiting, and optionally the Lease
// released on exit once the controllers have stopped.
package leader

import (
	"context"
	"errors"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/kubernetes-csi/csi-lib-utils/leaderelection"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// Options are the --leader-election* flags (AddFlags), under the names and
// defaults of the kubernetes-csi sidecars and validator.
type Options struct {
	Enabled bool
	// Namespace of the Lease; empty means the component's own
	// (POD_NAMESPACE, else the service account's namespace, else
	// "default").
	Namespace     string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

// NewOptions returns the flags' defaults: off, 15s, 10s, 5s.
func NewOptions() Options {
	return Options{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 5 * time.Second}
}

// AddFlags binds the options to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Enabled, "leader-election", o.Enabled, "Enables leader election. With several replicas, only the holder of the Lease runs the controllers.")
	fs.StringVar(&o.Namespace, "leader-election-namespace", o.Namespace, "The namespace where the leader election resource exists. Defaults to the pod namespace if not set.")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", o.LeaseDuration, "Duration, in seconds, that non-leader candidates will wait to force acquire leadership.")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", o.RenewDeadline, "Duration, in seconds, that the acting leader will retry refreshing leadership before giving up.")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", o.RetryPeriod, "Duration, in seconds, the LeaderElector clients should wait between tries of actions.")
}

// Validate checks the durations when leader election is on.
func (o Options) Validate() error {
	if !o.Enabled {
		return nil
	}
	if o.RetryPeriod <= 0 {
		return errors.New("--leader-election-retry-period must be positive")
	}
	if o.RenewDeadline >= o.LeaseDuration {
		return errors.New("--leader-election-renew-deadline must be shorter than --leader-election-lease-duration")
	}
	return nil
}

// Config is what Run needs besides the options.
type Config struct {
	Options
	// Client reads and writes the Lease; give it a client of its own, so
	// that busy controllers cannot starve the lease renewal.
	Client kubernetes.Interface
	// LockName names the Lease.
	LockName string
	// Labels are put on the Lease while this replica holds it.
	Labels map[string]string
	// Mux, if set, gets csi-lib-utils' /healthz/leader-election check,
	// which fails once the leader has not renewed its Lease for 20s.
	Mux *http.ServeMux
	// ReleaseOnExit releases the Lease when ctx ends, once run has
	// returned, so that a standby takes over at once rather than after
	// the lease duration.
	ReleaseOnExit bool
}

// Run runs run while this replica holds the Lease, until ctx ends. It
// returns errors rather than exiting, but csi-lib-utils exits the process
// (status 1) once this replica stops leading, whether it lost the Lease or
// released it on exit: controllers are not restarted under a Lease taken
// again. It does not use leaderelection.RunWithLeaderElection, which names
// the replica after the host alone and exits the process on errors.
func Run(ctx context.Context, cfg Config, run func(context.Context)) error {
	leaderCtx := ctx
	if cfg.ReleaseOnExit {
		var stop context.CancelFunc
		leaderCtx, run, stop = releaseAfterRun(ctx, run)
		defer stop()
	}
	le := leaderelection.NewLeaderElectionWithLeases(cfg.Client, cfg.LockName, run)
	// Hostname alone, csi-lib-utils' default, is not unique when two
	// replicas share a host (or a pod is restarted quickly): add a suffix.
	host, _ := os.Hostname()
	identity := host + "_" + string(uuid.NewUUID())[:8]
	le.WithIdentity(identity)
	klog.FromContext(ctx).Info("Running with leader election", "identity", identity, "lease", cfg.LockName,
		"releaseOnExit", cfg.ReleaseOnExit)
	if cfg.Mux != nil {
		le.PrepareHealthCheck(cfg.Mux, leaderelection.DefaultHealthCheckTimeout)
	}
	if cfg.Namespace != "" {
		le.WithNamespace(cfg.Namespace)
	}
	if len(cfg.Labels) > 0 {
		le.WithLabels(cfg.Labels)
	}
	le.WithLeaseDuration(cfg.LeaseDuration)
	le.WithRenewDeadline(cfg.RenewDeadline)
	le.WithRetryPeriod(cfg.RetryPeriod)
	le.WithReleaseOnCancel(cfg.ReleaseOnExit)
	le.WithContext(leaderCtx)
	return le.Run()
}

// releaseAfterRun returns the context to run leader election in and the
// function to run as leader: when ctx ends (SIGTERM), the controllers are
// stopped, and the leader election context ends only once they have
// returned, so the Lease is released (ReleaseOnCancel) after the last write
// of this replica. A replica that is not leading when ctx ends stops at
// once. stop releases the resources.
func releaseAfterRun(ctx context.Context, run func(context.Context)) (leaderCtx context.Context, runAsLeader func(context.Context), stop context.CancelFunc) {
	leaderCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var mu sync.Mutex
	leading := false
	stopStandby := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !leading {
			cancel()
		}
	})
	runAsLeader = func(leaseCtx context.Context) {
		mu.Lock()
		leading = true
		mu.Unlock()
		defer cancel()
		runCtx, stopRun := context.WithCancel(leaseCtx)
		defer stopRun()
		defer context.AfterFunc(ctx, stopRun)()
		run(runCtx)
	}
	return leaderCtx, runAsLeader, func() {
		stopStandby()
		cancel()
	}
}
