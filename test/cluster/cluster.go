// Package cluster runs a real local Kubernetes control plane for the
// end-to-end tests and the demo: an embedded etcd, kube-apiserver and
// kube-controller-manager built from Go modules (test/tools/kube, and
// test/tools/kube-1.36 for the oldest supported Kubernetes; see KubeBinDir), on
// loopback, with RBAC on and the CrossNamespaceVolumeDataSource gate enabled
// so spec.dataSourceRef.namespace is kept and the PV binder leaves such
// claims to the provisioner (Config.NoAlphaGates runs it like a managed
// cluster instead, with the gate off). No kubelet: volumes are never mounted, and the
// tests read data straight from the local CSI driver's state directory.
package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// KubeBinEnv is the environment variable naming the directory of the etcd,
// kube-apiserver and kube-controller-manager to run. The Makefile sets it
// from KUBE_VERSION (make test-e2e KUBE_VERSION=1.36), so that one run of
// the tests can be pointed at the oldest supported Kubernetes.
const KubeBinEnv = "XNS_KUBE_BIN"

// DefaultKubeVersion is the Kubernetes minor version run when KubeBinEnv is
// not set: make tools builds it into <BinDir>/kube-<version>.
const DefaultKubeVersion = "1.37"

// Config says where the binaries are and where the cluster keeps its state.
type Config struct {
	// BinDir is the directory make tools builds into (.cache/bin). etcd,
	// kube-apiserver and kube-controller-manager are run from KubeBinDir.
	BinDir string
	// WorkDir receives data, keys, kubeconfigs and logs; it must exist.
	WorkDir string
	// ControllerManagerQPS raises kube-controller-manager's client rate
	// limit, so it is not the bottleneck of a benchmark. 0 keeps 200.
	ControllerManagerQPS int
	// ClaimBinderSyncPeriod is how often kube-controller-manager's PV
	// binder goes through every claim again. 0 keeps 2s, so that tests
	// need not wait for a resync.
	ClaimBinderSyncPeriod time.Duration
	// NoAlphaGates leaves the alpha gate CrossNamespaceVolumeDataSource off
	// in kube-apiserver and kube-controller-manager, as on managed clusters
	// (EKS, GKE, AKS): the API server drops spec.dataSourceRef.namespace.
	NoAlphaGates bool
}

// gates is the --feature-gates flag of kube-apiserver and
// kube-controller-manager.
func (cfg Config) gates() string {
	return "--feature-gates=CrossNamespaceVolumeDataSource=" + strconv.FormatBool(!cfg.NoAlphaGates)
}

// KubeBinDir is the directory of etcd, kube-apiserver and
// kube-controller-manager: $XNS_KUBE_BIN when set, else the default
// version's directory under binDir.
func KubeBinDir(binDir string) string {
	if dir := os.Getenv(KubeBinEnv); dir != "" {
		return dir
	}
	return filepath.Join(binDir, "kube-"+DefaultKubeVersion)
}

// Cluster is a running control plane.
type Cluster struct {
	cfg Config
	// kubeBin is KubeBinDir(cfg.BinDir), read once so that Restart runs
	// the same binaries.
	kubeBin   string
	server    string
	processes []*Process
	// args holds each process's binary and arguments, by name, for Restart.
	args map[string][]string
	// restarts counts the restarts of each process, to name their logs.
	restarts map[string]int
}

// Start starts etcd, kube-apiserver and kube-controller-manager and waits
// until the API server is ready. On error, whatever started is stopped.
func Start(ctx context.Context, cfg Config) (c *Cluster, err error) {
	if cfg.ClaimBinderSyncPeriod == 0 {
		cfg.ClaimBinderSyncPeriod = 2 * time.Second
	}
	if cfg.ControllerManagerQPS == 0 {
		cfg.ControllerManagerQPS = 200
	}
	c = &Cluster{cfg: cfg, kubeBin: KubeBinDir(cfg.BinDir), args: map[string][]string{}, restarts: map[string]int{}}
	started := c // the error returns set c to nil
	defer func() {
		if err != nil {
			started.Stop()
		}
	}()
	if _, err := os.Stat(filepath.Join(c.kubeBin, "kube-apiserver")); err != nil {
		return nil, fmt.Errorf("%w: make tools builds it (make tools KUBE_VERSION=<minor> another version)", err)
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	if err := c.start("etcd", "etcd", "--data-dir", c.path("etcd"), "--listen-client-urls", etcdURL,
		"--listen-peer-urls", "http://127.0.0.1:"+strconv.Itoa(ports[1])); err != nil {
		return nil, err
	}
	if err := writeServiceAccountKey(c.path("sa.key")); err != nil {
		return nil, err
	}
	if err := writeTokenFile(c.path("tokens.csv"), Admin, Sidecar); err != nil {
		return nil, err
	}
	c.server = "https://127.0.0.1:" + strconv.Itoa(ports[2])
	if err := c.start("kube-apiserver", "kube-apiserver",
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port="+strconv.Itoa(ports[2]),
		// No endpoints for the kubernetes Service: nothing runs in the
		// cluster to use them, and 1.37 refuses to start a reconciler of
		// them with a loopback address (pkg/controlplane/instance.go).
		"--endpoint-reconciler-type=none",
		"--cert-dir="+c.path("certs"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+c.path("sa.key"), "--service-account-signing-key-file="+c.path("sa.key"),
		"--token-auth-file="+c.path("tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.0.0.0/24",
		cfg.gates(),
		"--disable-admission-plugins=ServiceAccount",
		"--enable-priority-and-fairness=false",
		"--max-requests-inflight=2000", "--max-mutating-requests-inflight=1000",
		"--v=1"); err != nil {
		return nil, err
	}
	for _, u := range []User{Admin, Sidecar} {
		if err := writeKubeconfig(c.Kubeconfig(u), c.server, u); err != nil {
			return nil, err
		}
	}
	if err := WaitHealthy(ctx, c.server+"/readyz", Admin.Token, c.processes...); err != nil {
		return nil, err
	}
	qps := strconv.Itoa(cfg.ControllerManagerQPS)
	if err := c.start("kube-controller-manager", "kube-controller-manager",
		"--kubeconfig="+c.Kubeconfig(Admin),
		"--controllers=persistentvolume-binder-controller,persistentvolume-protection-controller,persistentvolumeclaim-protection-controller,namespace-controller,garbage-collector-controller",
		cfg.gates(),
		"--leader-elect=false", "--secure-port=0",
		"--pvclaimbinder-sync-period="+cfg.ClaimBinderSyncPeriod.String(),
		"--kube-api-qps="+qps, "--kube-api-burst="+strconv.Itoa(2*cfg.ControllerManagerQPS),
		"--v=1"); err != nil {
		return nil, err
	}
	return c, nil
}

// Stop stops everything the cluster started, newest first.
func (c *Cluster) Stop() {
	for i := len(c.processes) - 1; i >= 0; i-- {
		c.processes[i].Stop(10 * time.Second)
	}
	c.processes = nil
}

// Server is the API server's URL.
func (c *Cluster) Server() string { return c.server }

// Kubeconfig is the path of the kubeconfig of user.
func (c *Cluster) Kubeconfig(u User) string { return c.path(sanitize(u.Name) + ".kubeconfig") }

// RESTConfig returns a client configuration for user.
func (c *Cluster) RESTConfig(u User) (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", c.Kubeconfig(u))
}

// LogDir is where the processes write their logs.
func (c *Cluster) LogDir() string { return c.cfg.WorkDir }

// Kubectl runs kubectl as the admin and returns its combined output.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", c.Kubeconfig(Admin)}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %v: %w: %s", args, err, out)
	}
	return string(out), nil
}

func (c *Cluster) start(name, bin string, args ...string) error {
	p, err := StartProcess(name, filepath.Join(c.kubeBin, bin), args, c.cfg.WorkDir)
	if err != nil {
		return err
	}
	c.processes = append(c.processes, p)
	c.args[name] = append([]string{bin}, args...)
	return nil
}

// Wait waits until the process has exited.
func (p *Process) Wait() { <-p.done }

// Restart kills the control-plane process with the given name ("etcd",
// "kube-apiserver", "kube-controller-manager") with SIGKILL, as a crash
// would, starts it again with the same arguments (same port, same data:
// kube-apiserver on the same etcd), logging to <name>-restart-<n>.log, and
// waits until the API server is ready again. Clients see their connections
// and watches broken.
func (c *Cluster) Restart(ctx context.Context, name string) error {
	i := slices.IndexFunc(c.processes, func(p *Process) bool { return p.Name == name })
	if i < 0 {
		return fmt.Errorf("no control-plane process %q", name)
	}
	old := c.processes[i]
	old.Kill()
	c.restarts[name]++
	// The new process logs to <name>.log again; the old log is kept.
	if err := os.Rename(old.LogPath(), filepath.Join(c.cfg.WorkDir, fmt.Sprintf("%s-before-restart-%d.log", name, c.restarts[name]))); err != nil {
		return err
	}
	cmd := c.args[name]
	p, err := StartProcess(name, filepath.Join(c.kubeBin, cmd[0]), cmd[1:], c.cfg.WorkDir)
	if err != nil {
		return err
	}
	c.processes[i] = p
	return WaitHealthy(ctx, c.server+"/readyz", Admin.Token, c.processes...)
}

func (c *Cluster) path(name string) string { return filepath.Join(c.cfg.WorkDir, name) }

// freePorts returns n free TCP ports on loopback.
func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// FreePort returns one free TCP port on loopback.
func FreePort() (int, error) {
	p, err := freePorts(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

// Process returns the control-plane process with the given name
// ("etcd", "kube-apiserver", "kube-controller-manager"), nil if none.
func (c *Cluster) Process(name string) *Process {
	for _, p := range c.processes {
		if p.Name == name {
			return p
		}
	}
	return nil
}
