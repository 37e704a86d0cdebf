//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	"k8s.io/client-go/kubernetes"
	gatewayclientset "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/xns-csi/csi-provisioner/test/cluster"
)

// env is the running world of the suite.
type env struct {
	root, work string
	cluster    *cluster.Cluster
	kube       kubernetes.Interface
	snaps      snapclientset.Interface
	gateway    gatewayclientset.Interface
	processes  []*cluster.Process
	// local is the shared driver stack: driver, csi-snapshotter, one sidecar.
	local *stack
}

// stack is one CSI driver with its csi-snapshotter and provisioner sidecars.
type stack struct {
	name, socket, state string
	sidecars            []*sidecar
}

// sidecar is one csi-provisioner process and its metrics address.
type sidecar struct {
	*cluster.Process
	httpAddr string
}

const localDriver = "local.csi.example.com"

func newEnv(ctx context.Context, root, work string) (*env, error) {
	e := &env{root: root, work: work}
	c, err := cluster.Start(ctx, cluster.Config{BinDir: e.tool(""), WorkDir: work})
	if err != nil {
		return nil, err
	}
	e.cluster = c
	config, err := c.RESTConfig(cluster.Admin)
	if err != nil {
		return e, err
	}
	config.QPS, config.Burst = 100, 200
	if e.kube, err = kubernetes.NewForConfig(config); err != nil {
		return e, err
	}
	if e.snaps, err = snapclientset.NewForConfig(config); err != nil {
		return e, err
	}
	if e.gateway, err = gatewayclientset.NewForConfig(config); err != nil {
		return e, err
	}
	// The snapshot CRDs are installed; the ReferenceGrant CRD is not, so the
	// first case can show the sidecar starting without it.
	if err := e.installCRDs(ctx, "snapshot.storage.k8s.io_volumesnapshotclasses.yaml",
		"snapshot.storage.k8s.io_volumesnapshotcontents.yaml", "snapshot.storage.k8s.io_volumesnapshots.yaml"); err != nil {
		return e, err
	}
	// The sidecar runs as the ServiceAccount of deploy/rbac.yaml: the shipped
	// RBAC is what is tested.
	if _, err := c.Kubectl(ctx, "apply", "-f", filepath.Join(root, "deploy", "rbac.yaml")); err != nil {
		return e, err
	}
	if err := e.start("snapshot-controller", e.tool("snapshot-controller"),
		"--kubeconfig="+c.Kubeconfig(cluster.Admin), "--leader-election=false", "--v=2"); err != nil {
		return e, err
	}
	e.local, err = e.startStack(ctx, localDriver, nil)
	if err != nil {
		return e, err
	}
	if _, err := e.startSidecar(ctx, e.local, "shared"); err != nil {
		return e, err
	}
	return e, nil
}

// startStack starts a driver and its csi-snapshotter.
func (e *env) startStack(ctx context.Context, name string, driverArgs []string) (*stack, error) {
	s := &stack{name: name, socket: filepath.Join(e.work, name+".sock"), state: filepath.Join(e.work, name+"-state")}
	if err := os.MkdirAll(s.state, 0o755); err != nil {
		return nil, err
	}
	args := append([]string{"--endpoint=" + s.socket, "--state-dir=" + s.state, "--name=" + name, "--v=2"}, driverArgs...)
	if err := e.start(name, filepath.Join(e.root, "bin", "csi-localdriver"), args...); err != nil {
		return nil, err
	}
	if err := waitForFile(ctx, s.socket); err != nil {
		return nil, err
	}
	if err := e.start(name+"-snapshotter", e.tool("csi-snapshotter"), "--csi-address="+s.socket,
		"--kubeconfig="+e.cluster.Kubeconfig(cluster.Admin), "--leader-election=false", "--v=2"); err != nil {
		return nil, err
	}
	return s, nil
}

// startSidecar starts a csi-provisioner for the stack, as the sidecar's
// ServiceAccount, with the feature gate on and its HTTP endpoint on a free
// port.
func (e *env) startSidecar(ctx context.Context, s *stack, id string, extra ...string) (*sidecar, error) {
	port, err := cluster.FreePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	args := append([]string{"--csi-address=" + s.socket, "--kubeconfig=" + e.cluster.Kubeconfig(cluster.Sidecar),
		"--feature-gates=CrossNamespaceSourceProvisioning=true", "--http-endpoint=" + addr, "--v=4"}, extra...)
	p, err := cluster.StartProcess(s.name+"-provisioner-"+id, filepath.Join(e.root, "bin", "csi-provisioner"), args, e.work)
	if err != nil {
		return nil, err
	}
	e.processes = append(e.processes, p)
	sc := &sidecar{Process: p, httpAddr: addr}
	s.sidecars = append(s.sidecars, sc)
	return sc, waitForHTTP(ctx, "http://"+addr+"/healthz", p)
}

func (e *env) start(name, bin string, args ...string) error {
	p, err := cluster.StartProcess(name, bin, args, e.work)
	if err != nil {
		return err
	}
	e.processes = append(e.processes, p)
	return nil
}

// stop stops every process of the suite, by PID, newest first.
func (e *env) stop() {
	for i := len(e.processes) - 1; i >= 0; i-- {
		e.processes[i].Stop(10 * time.Second)
	}
	if e.cluster != nil {
		e.cluster.Stop()
	}
}

func (e *env) tool(name string) string { return filepath.Join(e.root, ".cache", "bin", name) }

// installCRDs applies CRDs from .cache/crds and waits until they are served.
func (e *env) installCRDs(ctx context.Context, files ...string) error {
	for _, f := range files {
		path := filepath.Join(e.root, ".cache", "crds", f)
		if _, err := e.cluster.Kubectl(ctx, "apply", "--server-side", "-f", path); err != nil {
			return err
		}
		if _, err := e.cluster.Kubectl(ctx, "wait", "--for=condition=established", "--timeout=60s", "-f", path); err != nil {
			return err
		}
	}
	return nil
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

func waitForHTTP(ctx context.Context, url string, p *cluster.Process) error {
	for i := 0; i < 600; i++ {
		if exited, err := p.Exited(); exited {
			return fmt.Errorf("%s exited (%v); see %s", p.Name, err, p.LogPath())
		}
		if resp, err := http.Get(url); err == nil { //nolint:noctx // local test endpoint
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not answer on %s", p.Name, url)
}
