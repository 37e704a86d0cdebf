// Package localenv brings up everything the end-to-end tests and the demo
// run against: the local control plane (package cluster), the snapshot CRDs,
// the sidecar's RBAC from deploy/, the snapshot-controller, and "stacks" of
// the local CSI driver with its csi-snapshotter and csi-provisioner sidecars.
package localenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	"k8s.io/client-go/kubernetes"
	gatewayclientset "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	"sigs.k8s.io/yaml"

	"github.com/xns-csi/csi-provisioner/test/cluster"
)

// Env is a running local environment.
type Env struct {
	// Root is the repository; Work holds state and logs.
	Root, Work string
	Cluster    *cluster.Cluster
	// Kube, Snaps and Gateway are admin clients.
	Kube      kubernetes.Interface
	Snaps     snapclientset.Interface
	Gateway   gatewayclientset.Interface
	processes []*cluster.Process
	// snapshotterArgs are Config.SnapshotterArgs.
	snapshotterArgs []string
	// Local is the shared driver stack: driver, csi-snapshotter, one sidecar.
	Local *Stack
}

// Stack is one CSI driver with its csi-snapshotter and provisioner sidecars.
type Stack struct {
	// Name is the CSI driver name; Socket its endpoint; State its data.
	Name, Socket, State string
	Sidecars            []*Sidecar
}

// VolumeDir is where the local driver keeps the data of a volume.
func (s *Stack) VolumeDir(handle string) string { return filepath.Join(s.State, "volumes", handle) }

// Sidecar is one csi-provisioner process and its HTTP endpoint.
type Sidecar struct {
	*cluster.Process
	HTTPAddr string
}

// LocalDriver is the name of the shared stack's driver.
const LocalDriver = "local.csi.example.com"

// Config says where things are and what to call the shared driver.
type Config struct {
	// Root is the repository, Work an existing directory for state and logs.
	Root, Work string
	// DriverName of the shared stack; LocalDriver if empty.
	DriverName string
	// Progress, if set, is told what is being started.
	Progress func(step string)
	// NoAlphaGates runs the control plane without the alpha gate
	// CrossNamespaceVolumeDataSource, as managed clusters do.
	NoAlphaGates bool
	// ClaimBinderSyncPeriod is kube-controller-manager's
	// --pvclaimbinder-sync-period (see cluster.Config).
	ClaimBinderSyncPeriod time.Duration
	// SidecarArgs are added to the shared sidecar's arguments, e.g.
	// --cross-namespace-snapshot.
	SidecarArgs []string
	// SnapshotControllerArgs are added to the snapshot-controller's
	// arguments, e.g. --kube-api-qps=200 so that it is not a benchmark's
	// bottleneck.
	SnapshotControllerArgs []string
	// SnapshotterArgs are added to the arguments of every csi-snapshotter
	// the environment starts.
	SnapshotterArgs []string
	// ControlPlaneOnly stops after the CRDs: no RBAC, snapshot-controller,
	// driver or sidecar (Local is nil).
	ControlPlaneOnly bool
	// SnapshotCRDsWithoutCEL installs the snapshot CRDs without their CEL
	// rules (x-kubernetes-validations), as clusters whose CRDs predate
	// external-snapshotter v8 have them.
	SnapshotCRDsWithoutCEL bool
}

// Start brings the environment up: control plane, snapshot CRDs, RBAC,
// snapshot-controller and the shared stack with one sidecar. The
// ReferenceGrant CRD is not installed (see InstallCRDs). On error the
// returned Env, if not nil, must still be stopped.
func Start(ctx context.Context, cfg Config) (*Env, error) {
	if cfg.DriverName == "" {
		cfg.DriverName = LocalDriver
	}
	progress := cfg.Progress
	if progress == nil {
		progress = func(string) {}
	}
	e := &Env{Root: cfg.Root, Work: cfg.Work, snapshotterArgs: cfg.SnapshotterArgs}
	root, work := cfg.Root, cfg.Work
	progress("control plane: etcd, kube-apiserver, kube-controller-manager")
	c, err := cluster.Start(ctx, cluster.Config{BinDir: e.tool(""), WorkDir: work, NoAlphaGates: cfg.NoAlphaGates,
		ClaimBinderSyncPeriod: cfg.ClaimBinderSyncPeriod})
	if err != nil {
		return nil, err
	}
	e.Cluster = c
	config, err := c.RESTConfig(cluster.Admin)
	if err != nil {
		return e, err
	}
	config.QPS, config.Burst = 100, 200
	if e.Kube, err = kubernetes.NewForConfig(config); err != nil {
		return e, err
	}
	if e.Snaps, err = snapclientset.NewForConfig(config); err != nil {
		return e, err
	}
	if e.Gateway, err = gatewayclientset.NewForConfig(config); err != nil {
		return e, err
	}
	progress("CRDs, RBAC from deploy/csi-provisioner/rbac.yaml and snapshot-controller")
	// The snapshot CRDs are installed; the ReferenceGrant CRD is not, so the
	// first case can show the sidecar starting without it.
	// The group snapshot CRDs are installed too: the snapshot-controller
	// waits for them at start.
	install := e.InstallCRDs
	if cfg.SnapshotCRDsWithoutCEL {
		install = e.InstallCRDsWithoutCEL
	}
	if err := install(ctx, "snapshot.storage.k8s.io_volumesnapshotclasses.yaml",
		"snapshot.storage.k8s.io_volumesnapshotcontents.yaml", "snapshot.storage.k8s.io_volumesnapshots.yaml",
		"groupsnapshot.storage.k8s.io_volumegroupsnapshotclasses.yaml",
		"groupsnapshot.storage.k8s.io_volumegroupsnapshotcontents.yaml",
		"groupsnapshot.storage.k8s.io_volumegroupsnapshots.yaml"); err != nil {
		return e, err
	}
	if cfg.ControlPlaneOnly {
		return e, nil
	}
	// The sidecar runs as the ServiceAccount of deploy/csi-provisioner/rbac.yaml:
	// the shipped RBAC is what is tested.
	if _, err := c.Kubectl(ctx, "apply", "-f", filepath.Join(root, "deploy", "csi-provisioner", "rbac.yaml")); err != nil {
		return e, err
	}
	if err := e.start("snapshot-controller", e.tool("snapshot-controller"), append([]string{
		"--kubeconfig=" + c.Kubeconfig(cluster.Admin), "--leader-election=false", "--v=2"}, cfg.SnapshotControllerArgs...)...); err != nil {
		return e, err
	}
	progress("local CSI driver " + cfg.DriverName + ", csi-snapshotter and csi-provisioner")
	e.Local, err = e.StartStack(ctx, cfg.DriverName, nil)
	if err != nil {
		return e, err
	}
	if _, err := e.StartSidecar(ctx, e.Local, "shared", cfg.SidecarArgs...); err != nil {
		return e, err
	}
	return e, nil
}

// StartStack starts a driver and its csi-snapshotter.
func (e *Env) StartStack(ctx context.Context, name string, driverArgs []string) (*Stack, error) {
	s := &Stack{Name: name, Socket: filepath.Join(e.Work, name+".sock"), State: filepath.Join(e.Work, name+"-state")}
	if err := os.MkdirAll(s.State, 0o755); err != nil {
		return nil, err
	}
	args := append([]string{"--endpoint=" + s.Socket, "--state-dir=" + s.State, "--name=" + name, "--v=2"}, driverArgs...)
	if err := e.start(name, filepath.Join(e.Root, "bin", "csi-localdriver"), args...); err != nil {
		return nil, err
	}
	if err := waitForFile(ctx, s.Socket); err != nil {
		return nil, err
	}
	if err := e.start(name+"-snapshotter", e.tool("csi-snapshotter"), append([]string{"--csi-address=" + s.Socket,
		"--kubeconfig=" + e.Cluster.Kubeconfig(cluster.Admin), "--leader-election=false", "--v=2"}, e.snapshotterArgs...)...); err != nil {
		return nil, err
	}
	return s, nil
}

// StartSidecar starts a csi-provisioner for the stack, as the sidecar's
// ServiceAccount, with the feature gate on and its HTTP endpoint on a free
// port.
func (e *Env) StartSidecar(ctx context.Context, s *Stack, id string, extra ...string) (*Sidecar, error) {
	return e.StartSidecarWithEnv(ctx, s, id, nil, extra...)
}

// StartSidecarWithEnv is StartSidecar with environment variables for the
// sidecar, e.g. the NAMESPACE, POD_NAME and NODE_NAME the downward API
// gives it in a pod.
func (e *Env) StartSidecarWithEnv(ctx context.Context, s *Stack, id string, env []string, extra ...string) (*Sidecar, error) {
	return e.startSidecar(ctx, s, s.Name+"-provisioner-"+id, e.SidecarBinary(), cluster.Sidecar, "/healthz", env,
		append([]string{"--feature-gates=CrossNamespaceSourceProvisioning=true", "--v=4"}, extra...))
}

// SidecarBinary is this sidecar's binary (make build).
func (e *Env) SidecarBinary() string { return filepath.Join(e.Root, "bin", "csi-provisioner") }

// UpstreamBinary is the upstream csi-provisioner's binary (make bench
// builds it).
func (e *Env) UpstreamBinary() string { return e.tool("upstream-csi-provisioner") }

// UpstreamVersion is the upstream csi-provisioner release that make bench
// builds (test/tools/upstream).
func (e *Env) UpstreamVersion(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, e.UpstreamBinary(), "--version").CombinedOutput()
	if err != nil && len(out) == 0 {
		return "", err
	}
	fields := strings.Fields(string(out)) // "<path> <version>"
	if len(fields) == 0 {
		return "", fmt.Errorf("upstream-csi-provisioner --version printed nothing")
	}
	return fields[len(fields)-1], nil
}

// StartUpstreamSidecar starts the upstream csi-provisioner like
// StartSidecar, with its own name for the feature gate, to measure the two
// side by side. It runs as the admin, as its RBAC differs from ours (it
// updates VolumeSnapshots where we patch them), and has no /healthz: it
// counts as started once it serves its metrics.
func (e *Env) StartUpstreamSidecar(ctx context.Context, s *Stack, id string, extra ...string) (*Sidecar, error) {
	return e.StartUpstreamSidecarWithEnv(ctx, s, id, nil, extra...)
}

// StartUpstreamSidecarWithEnv is StartUpstreamSidecar with environment
// variables, as StartSidecarWithEnv.
func (e *Env) StartUpstreamSidecarWithEnv(ctx context.Context, s *Stack, id string, env []string, extra ...string) (*Sidecar, error) {
	return e.startSidecar(ctx, s, s.Name+"-upstream-"+id, e.UpstreamBinary(), cluster.Admin, "/metrics", env,
		append([]string{"--feature-gates=CrossNamespaceVolumeDataSource=true", "--v=2"}, extra...))
}

func (e *Env) startSidecar(ctx context.Context, s *Stack, name, bin string, user cluster.User, healthPath string, env, extra []string) (*Sidecar, error) {
	port, err := cluster.FreePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	args := append([]string{"--csi-address=" + s.Socket, "--kubeconfig=" + e.Cluster.Kubeconfig(user),
		"--http-endpoint=" + addr}, extra...)
	p, err := cluster.StartProcess(name, bin, args, e.Work, env...)
	if err != nil {
		return nil, err
	}
	e.processes = append(e.processes, p)
	sc := &Sidecar{Process: p, HTTPAddr: addr}
	s.Sidecars = append(s.Sidecars, sc)
	return sc, cluster.WaitHealthy(ctx, "http://"+addr+healthPath, "", p)
}

// StopProcess stops the process the environment started as name (e.g.
// "snapshot-controller"); false if there is none.
func (e *Env) StopProcess(name string) bool {
	for _, p := range e.processes {
		if p.Name == name {
			p.Stop(10 * time.Second)
			return true
		}
	}
	return false
}

func (e *Env) start(name, bin string, args ...string) error {
	p, err := cluster.StartProcess(name, bin, args, e.Work)
	if err != nil {
		return err
	}
	e.processes = append(e.processes, p)
	return nil
}

// Stop stops every process the environment started, by PID, newest first.
func (e *Env) Stop() {
	for i := len(e.processes) - 1; i >= 0; i-- {
		e.processes[i].Stop(10 * time.Second)
	}
	if e.Cluster != nil {
		e.Cluster.Stop()
	}
}

func (e *Env) tool(name string) string { return filepath.Join(e.Root, ".cache", "bin", name) }

// InstallCRDs applies CRDs from .cache/crds and waits until they are served.
func (e *Env) InstallCRDs(ctx context.Context, files ...string) error {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join(e.Root, ".cache", "crds", f)
	}
	return e.applyCRDs(ctx, paths)
}

// InstallCRDsWithoutCEL applies CRDs from .cache/crds with every CEL rule
// (x-kubernetes-validations) taken out of their schemas, and waits until
// they are served.
func (e *Env) InstallCRDsWithoutCEL(ctx context.Context, files ...string) error {
	dir := filepath.Join(e.Work, "crds-without-cel")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	paths := make([]string, len(files))
	for i, f := range files {
		data, err := os.ReadFile(filepath.Join(e.Root, ".cache", "crds", f))
		if err != nil {
			return err
		}
		var crd map[string]any
		if err := yaml.Unmarshal(data, &crd); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		dropKey(crd, "x-kubernetes-validations")
		if data, err = yaml.Marshal(crd); err != nil {
			return err
		}
		paths[i] = filepath.Join(dir, f)
		if err := os.WriteFile(paths[i], data, 0o644); err != nil {
			return err
		}
	}
	return e.applyCRDs(ctx, paths)
}

// dropKey deletes key from every map nested in v.
func dropKey(v any, key string) {
	switch v := v.(type) {
	case map[string]any:
		delete(v, key)
		for _, child := range v {
			dropKey(child, key)
		}
	case []any:
		for _, child := range v {
			dropKey(child, key)
		}
	}
}

func (e *Env) applyCRDs(ctx context.Context, paths []string) error {
	for _, path := range paths {
		if _, err := e.Cluster.Kubectl(ctx, "apply", "--server-side", "-f", path); err != nil {
			return err
		}
		if _, err := e.Cluster.Kubectl(ctx, "wait", "--for=condition=established", "--timeout=60s", "-f", path); err != nil {
			return err
		}
	}
	return nil
}

// InstallProjectCRDs applies this project's CRDs (deploy/crds/generated,
// e.g. VolumeSnapshotLink) and waits until they are served.
func (e *Env) InstallProjectCRDs(ctx context.Context) error {
	dir := filepath.Join(e.Root, "deploy", "crds", "generated")
	if _, err := e.Cluster.Kubectl(ctx, "apply", "--server-side", "-f", dir); err != nil {
		return err
	}
	_, err := e.Cluster.Kubectl(ctx, "wait", "--for=condition=established", "--timeout=60s", "-f", dir)
	return err
}

func waitForFile(ctx context.Context, path string) error {
	for i := 0; i < 300; i++ {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not appear", path)
}

// RepoRoot finds the repository from the working directory upwards.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "cmd", "csi-provisioner")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("repository root not found from %s", dir)
}
