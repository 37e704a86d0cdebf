package sidecar

import (
	goflag "flag"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"sync"

	"github.com/kubernetes-csi/csi-lib-utils/standardflags"
	"github.com/spf13/pflag"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"

	"github.com/xns-csi/csi-provisioner/internal/shared/features"
	"github.com/xns-csi/csi-provisioner/internal/shared/leader"

	// --logging-format=json, as in the upstream csi-provisioner.
	_ "k8s.io/component-base/logs/json/register"
)

// ParseFlags parses the sidecar's command line (args without the program
// name) into Options and validates them: the one entry point of
// cmd/csi-provisioner. It reads the environment variables the upstream
// csi-provisioner reads at start: KUBECONFIG (which wins over --kubeconfig),
// NODE_NAME (--node-deployment), NAMESPACE and POD_NAME (--enable-capacity).
//
// Its only side effects are on the process-global state of the common flags
// (see AddFlags), and --automaxprocs, which sets GOMAXPROCS while it is
// parsed, as upstream. Calls are serialized, so tests may call it many times
// and concurrently. -h and --help print the usage to stderr and return
// pflag.ErrHelp. Parse errors and validation errors are returned, not
// printed.
func ParseFlags(args []string) (*Options, error) {
	return parseFlags(args, os.Getenv, os.Stderr)
}

// parseMu serializes parseFlags: the common flags are process-global.
var parseMu sync.Mutex

func parseFlags(args []string, getenv func(string) string, output io.Writer) (*Options, error) {
	parseMu.Lock()
	defer parseMu.Unlock()
	opts := NewOptions()
	fs := pflag.NewFlagSet("csi-provisioner", pflag.ContinueOnError)
	fs.SetOutput(output)
	opts.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		// The upstream binary ignores them; they are always a mistake in a
		// manifest (e.g. a value split from its flag), so say so.
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	opts.complete(getenv)
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return opts, nil
}

// AddFlags binds every option to a flag of fs, under the upstream
// csi-provisioner's names, types and defaults, plus the flags this sidecar
// adds.
//
// The flags every CSI sidecar shares (--version, --kubeconfig,
// --csi-address, --leader-election*, --kube-api-qps, --kube-api-burst,
// --http-endpoint, --metrics-address, --metrics-path, --automaxprocs) come
// from csi-lib-utils' standardflags, as upstream's do. That package
// registers them on Go's global flag.CommandLine and stores their values in
// the global standardflags.Configuration, so they exist once per process:
// AddFlags registers them the first time, resets them to their defaults
// every time, and adds them to fs. After fs is parsed, complete copies their
// values into the Options; ParseFlags does all of this. Consequently the
// common flags of two flag sets share their values: use one at a time.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	addCommonFlags(fs)

	fs.StringVar(&o.Master, "master", o.Master, "Master URL to build a client config from. Either this or kubeconfig needs to be set if the provisioner is being run out of cluster.")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "Timeout of each CSI call (creation, deletion). CreateVolume is retried with the same name after a timeout, so a short value is safe.")
	fs.Var(uintFlag{&o.WorkerThreads}, "worker-threads", "Number of provisioner worker threads, in other words nr. of simultaneous CSI calls.")
	fs.Var(uintFlag{&o.FinalizerThreads}, "cloning-protection-threads", "Number of workers adding and removing the source-protection finalizers of cloned PVCs and of VolumeSnapshots being restored.")
	fs.Var(uintFlag{&o.FinalizerThreads}, "finalizer-threads", "Deprecated alias of --cloning-protection-threads; when both are given, the last one wins.")
	_ = fs.MarkDeprecated("finalizer-threads", "use --cloning-protection-threads")
	fs.DurationVar(&o.OrphanSweep.Interval, "snapshot-orphan-sweep-interval", o.OrphanSweep.Interval, "Accepted for compatibility with the upstream csi-provisioner, where it is the interval of a sweep for orphaned snapshot source-protection finalizers (0 disables it). This sidecar needs no such sweep: it re-examines every protected snapshot at start and every --resync-period.")
	fs.DurationVar(&o.RetryIntervalStart, "retry-interval-start", o.RetryIntervalStart, "Initial retry interval of failed provisioning or deletion. It doubles with each failure, up to retry-interval-max. Claims waiting for a ReferenceGrant or snapshot are re-queued at once when it changes, independently of this backoff.")
	fs.DurationVar(&o.RetryIntervalMax, "retry-interval-max", o.RetryIntervalMax, "Maximum retry interval of failed provisioning or deletion.")
	fs.DurationVar(&o.ResyncPeriod, "resync-period", o.ResyncPeriod, "Resync period of the informers (this sidecar's flag).")

	fs.StringVar(&o.Volume.VolumeNamePrefix, "volume-name-prefix", o.Volume.VolumeNamePrefix, "Prefix to apply to the name of a created volume.")
	fs.IntVar(&o.Volume.VolumeNameUUIDLength, "volume-name-uuid-length", o.Volume.VolumeNameUUIDLength, "Truncates generated UUID of a created volume to this length, dashes removed. Defaults behavior is to NOT truncate (the volume is then named like its PV).")
	fs.StringVar(&o.Volume.DefaultFSType, "default-fstype", o.Volume.DefaultFSType, "The default filesystem type of the volume to provision when fstype is unspecified in the StorageClass. If the default is not set and fstype is unset in the StorageClass, then no fstype will be set")
	fs.BoolVar(&o.Volume.ExtraCreateMetadata, "extra-create-metadata", o.Volume.ExtraCreateMetadata, "If set, add pv/pvc metadata to plugin create requests as parameters.")
	fs.BoolVar(&o.Volume.StrictTopology, "strict-topology", o.Volume.StrictTopology, "Late binding: pass only selected node topology to CreateVolume Request, unlike default behavior of passing aggregated cluster topologies that match with topology keys of the selected node.")
	fs.BoolVar(&o.Volume.ImmediateTopology, "immediate-topology", o.Volume.ImmediateTopology, "Immediate binding: pass aggregated cluster topologies for all nodes where the CSI driver is available (enabled, the default) or no topology requirements (if disabled).")
	fs.BoolVar(&o.Volume.ControllerPublishReadOnly, "controller-publish-readonly", o.Volume.ControllerPublishReadOnly, "This option enables PV to be marked as readonly at controller publish volume call if PVC accessmode has been set to ROX.")
	fs.BoolVar(&o.Volume.PreventVolumeModeConversion, "prevent-volume-mode-conversion", o.Volume.PreventVolumeModeConversion, "Prevents an unauthorized user from modifying the volume mode when creating a PVC from an existing VolumeSnapshot.")
	fs.BoolVar(&o.CrossNamespaceSnapshot, "cross-namespace-snapshot", o.CrossNamespaceSnapshot, "Restore claims whose dataSourceRef is a VolumeSnapshotLink (snapshot.storage.k8s.io/v1alpha1) from the VolumeSnapshot it links to; one in another namespace only when a ReferenceGrant there allows it. Needs no alpha feature gate on the API server (this sidecar's flag).")
	fs.BoolVar(&o.EnablePprof, "enable-pprof", o.EnablePprof, "Enable pprof profiling on the TCP network address specified by --http-endpoint. The HTTP path is `/debug/pprof/`.")

	fs.BoolVar(&o.Capacity.Enabled, "enable-capacity", o.Capacity.Enabled, "This enables producing CSIStorageCapacity objects with capacity information from the driver's GetCapacity call, in the namespace of the NAMESPACE environment variable.")
	fs.BoolVar(&o.Capacity.ForImmediateBinding, "capacity-for-immediate-binding", o.Capacity.ForImmediateBinding, "Enables producing capacity information for storage classes with immediate binding (see --enable-capacity).")
	fs.DurationVar(&o.Capacity.PollInterval, "capacity-poll-interval", o.Capacity.PollInterval, "How long the external-provisioner waits before checking for storage capacity changes (see --enable-capacity).")
	fs.IntVar(&o.Capacity.OwnerRefLevel, "capacity-ownerref-level", o.Capacity.OwnerRefLevel, "The level indicates the number of objects that need to be traversed starting from the pod identified by the POD_NAME and NAMESPACE environment variables to reach the owning object for CSIStorageCapacity objects: -1 for no owner, 0 for the pod itself, 1 for a StatefulSet or DaemonSet, 2 for a Deployment, etc. (see --enable-capacity)")
	fs.Var(uintFlag{&o.Capacity.Threads}, "capacity-threads", "Number of simultaneously running threads, handling CSIStorageCapacity objects (see --enable-capacity).")
	fs.Float32Var(&o.Capacity.KubeAPIQPS, "kube-api-capacity-qps", o.Capacity.KubeAPIQPS, "QPS to use for storage capacity updates while communicating with the kubernetes apiserver (see --enable-capacity).")
	fs.IntVar(&o.Capacity.KubeAPIBurst, "kube-api-capacity-burst", o.Capacity.KubeAPIBurst, "Burst to use for storage capacity updates while communicating with the kubernetes apiserver (see --enable-capacity).")

	fs.BoolVar(&o.NodeDeployment.Enabled, "node-deployment", o.NodeDeployment.Enabled, "Enables deploying the external-provisioner together with a CSI driver on nodes to manage node-local volumes: each sidecar provisions and deletes only the volumes of its node, the one named by the NODE_NAME environment variable.")
	fs.BoolVar(&o.NodeDeployment.ImmediateBinding, "node-deployment-immediate-binding", o.NodeDeployment.ImmediateBinding, "Determines whether immediate binding is supported when deployed on each node (see --node-deployment).")
	fs.DurationVar(&o.NodeDeployment.BaseDelay, "node-deployment-base-delay", o.NodeDeployment.BaseDelay, "Determines how long the external-provisioner sleeps initially before trying to own a PVC with immediate binding (see --node-deployment).")
	fs.DurationVar(&o.NodeDeployment.MaxDelay, "node-deployment-max-delay", o.NodeDeployment.MaxDelay, "Determines how long the external-provisioner sleeps at most before trying to own a PVC with immediate binding (see --node-deployment).")

	o.FeatureGate.AddFlag(fs)
	logsapi.AddFlags(o.Logging, fs)
}

// complete copies the common flags' values out of csi-lib-utils' global
// configuration, passes the VolumeAttributesClass gate on to the
// provisioner's options, and reads the environment variables upstream
// reads.
func (o *Options) complete(getenv func(string) string) {
	c := standardflags.Configuration
	o.ShowVersion = c.ShowVersion
	o.CSIAddress = c.CSIAddress
	o.Kubeconfig = c.KubeConfig
	o.KubeAPIQPS, o.KubeAPIBurst = c.KubeAPIQPS, c.KubeAPIBurst
	o.HTTPEndpoint, o.MetricsAddress, o.MetricsPath = c.HttpEndpoint, c.MetricsAddress, c.MetricsPath
	o.LeaderElection = LeaderElectionOptions{Options: leader.Options{Enabled: c.LeaderElection, Namespace: c.LeaderElectionNamespace,
		LeaseDuration: c.LeaderElectionLeaseDuration, RenewDeadline: c.LeaderElectionRenewDeadline,
		RetryPeriod: c.LeaderElectionRetryPeriod}}
	if len(c.LeaderElectionLabels) > 0 {
		o.LeaderElection.Labels = maps.Clone(c.LeaderElectionLabels)
	}
	// As upstream: a set KUBECONFIG replaces --kubeconfig.
	if kubeconfig := getenv("KUBECONFIG"); kubeconfig != "" {
		o.Kubeconfig, o.KubeconfigFromEnv = kubeconfig, true
	}
	// The provisioner tells "not set" (nil: on while the cluster serves the
	// v1 API, upstream's start-up rule) from an explicit value.
	o.Volume.VolumeAttributesClass = nil
	if o.FeatureGate.ExplicitlySet(features.VolumeAttributesClass) {
		enabled := o.FeatureGate.Enabled(features.VolumeAttributesClass)
		o.Volume.VolumeAttributesClass = &enabled
	}
	o.NodeDeployment.NodeName = getenv("NODE_NAME")
	o.Capacity.Namespace, o.Capacity.PodName = getenv("NAMESPACE"), getenv("POD_NAME")
}

var (
	commonFlagsOnce sync.Once
	// commonFlags are the flags csi-lib-utils registered on
	// goflag.CommandLine, by name.
	commonFlags []string
)

// addCommonFlags registers csi-lib-utils' common flags once per process,
// resets them to their defaults and adds them to fs. It adds them by name
// rather than with fs.AddGoFlagSet(goflag.CommandLine), which would also add
// whatever else is registered there (the -test.* flags in tests).
func addCommonFlags(fs *pflag.FlagSet) {
	commonFlagsOnce.Do(func() {
		before := map[string]bool{}
		goflag.CommandLine.VisitAll(func(f *goflag.Flag) { before[f.Name] = true })
		standardflags.RegisterCommonFlags(goflag.CommandLine)
		standardflags.AddAutomaxprocs(logAutomaxprocs)
		goflag.CommandLine.VisitAll(func(f *goflag.Flag) {
			if !before[f.Name] {
				commonFlags = append(commonFlags, f.Name)
			}
		})
	})
	for _, name := range commonFlags {
		f := goflag.CommandLine.Lookup(name)
		resetGoFlag(f)
		// After the reset: pflag takes the default it shows from the
		// current value.
		fs.AddGoFlag(f)
	}
}

// resetGoFlag sets a common flag back to its default.
func resetGoFlag(f *goflag.Flag) {
	var err error
	switch f.Name {
	case "leader-election-labels":
		// Its Set adds labels to the map; complete copies the map, so
		// emptying it in place affects no Options.
		clear(standardflags.Configuration.LeaderElectionLabels)
	case "automaxprocs":
		// A function flag without a default: "false" undoes an earlier
		// --automaxprocs (and does nothing otherwise).
		err = f.Value.Set("false")
	default:
		err = f.Value.Set(f.DefValue)
	}
	if err != nil {
		panic(fmt.Sprintf("resetting --%s to its default %q: %v", f.Name, f.DefValue, err))
	}
}

// logAutomaxprocs logs what --automaxprocs did. csi-lib-utils passes the
// message already formatted.
func logAutomaxprocs(format string, args ...any) {
	klog.Background().Info("automaxprocs", "message", fmt.Sprintf(format, args...))
}

// uintFlag is a flag of type uint, as upstream declares its thread counts,
// stored into an int option (what the controllers take).
type uintFlag struct{ p *int }

func (f uintFlag) String() string { return strconv.Itoa(*f.p) }

func (f uintFlag) Set(s string) error {
	// Like pflag's uint, with the int's range.
	v, err := strconv.ParseUint(s, 0, strconv.IntSize-1)
	if err != nil {
		return err
	}
	*f.p = int(v)
	return nil
}

func (f uintFlag) Type() string { return "uint" }
