package localenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/xns-csi/csi-provisioner/test/cluster"
)

// ValidatorServiceAccount is the ServiceAccount of deploy/validator/rbac.yaml
// (namespace default), as which the validator runs.
const ValidatorServiceAccount = "volume-data-source-validator"

// Validator is one volume-data-source-validator process and its HTTP
// endpoint.
type Validator struct {
	*cluster.Process
	HTTPAddr string
}

// ValidatorBinary is this project's validator (make build).
func (e *Env) ValidatorBinary() string {
	return filepath.Join(e.Root, "bin", "volume-data-source-validator")
}

// InstallPopulatorCRD applies the VolumePopulator CRD of deploy/crds and
// waits until it is served.
func (e *Env) InstallPopulatorCRD(ctx context.Context) error {
	path := filepath.Join(e.Root, "deploy", "crds", "generated", "populator.storage.k8s.io_volumepopulators.yaml")
	if _, err := e.Cluster.Kubectl(ctx, "apply", "--server-side", "-f", path); err != nil {
		return err
	}
	_, err := e.Cluster.Kubectl(ctx, "wait", "--for=condition=established", "--timeout=60s", "-f", path)
	return err
}

// UpstreamValidatorBinary is the upstream volume-data-source-validator's
// binary (make bench builds it).
func (e *Env) UpstreamValidatorBinary() string {
	return e.tool("upstream-volume-data-source-validator")
}

// StartValidator starts the validator as the ServiceAccount of
// deploy/validator/rbac.yaml, which it applies (the shipped RBAC is what is
// tested), with its HTTP endpoint on a free port and extra arguments, and
// waits until it answers /healthz. Env.Stop stops it.
func (e *Env) StartValidator(ctx context.Context, name string, extra ...string) (*Validator, error) {
	return e.startValidator(ctx, name, e.ValidatorBinary(), "/healthz", extra)
}

// StartUpstreamValidator starts the upstream volume-data-source-validator
// like StartValidator, as the same ServiceAccount (our RBAC grants all it
// reads and writes), to measure the two side by side. It has no /healthz:
// it counts as started once it serves its metrics.
func (e *Env) StartUpstreamValidator(ctx context.Context, name string, extra ...string) (*Validator, error) {
	return e.startValidator(ctx, name, e.UpstreamValidatorBinary(), "/metrics", extra)
}

func (e *Env) startValidator(ctx context.Context, name, bin, healthPath string, extra []string) (*Validator, error) {
	args, addr, err := e.controllerArgs(ctx, "validator", ValidatorServiceAccount, extra)
	if err != nil {
		return nil, err
	}
	p, err := cluster.StartProcess(name, bin, args, e.Work)
	if err != nil {
		return nil, err
	}
	e.processes = append(e.processes, p)
	return &Validator{Process: p, HTTPAddr: addr}, cluster.WaitHealthy(ctx, "http://"+addr+healthPath, "", p)
}

// controllerArgs applies deploy/<component>/rbac.yaml (the shipped RBAC is
// what is tested) and returns a controller's arguments: a kubeconfig of
// the ServiceAccount default/<serviceAccount>, its HTTP endpoint on a free
// port (addr) and extra.
func (e *Env) controllerArgs(ctx context.Context, component, serviceAccount string, extra []string) (args []string, addr string, err error) {
	if _, err := e.Cluster.Kubectl(ctx, "apply", "-f", filepath.Join(e.Root, "deploy", component, "rbac.yaml")); err != nil {
		return nil, "", err
	}
	kubeconfig, err := e.serviceAccountKubeconfig(ctx, "default", serviceAccount)
	if err != nil {
		return nil, "", err
	}
	port, err := cluster.FreePort()
	if err != nil {
		return nil, "", err
	}
	addr = "127.0.0.1:" + strconv.Itoa(port)
	return append([]string{"--kubeconfig=" + kubeconfig, "--http-endpoint=" + addr}, extra...), addr, nil
}

// serviceAccountKubeconfig writes a kubeconfig with a token of the
// ServiceAccount namespace/name (TokenRequest) and returns its path.
func (e *Env) serviceAccountKubeconfig(ctx context.Context, namespace, name string) (string, error) {
	out, err := e.Cluster.Kubectl(ctx, "create", "token", name, "-n", namespace, "--duration=24h")
	if err != nil {
		return "", err
	}
	token := strings.TrimSpace(out)
	if token == "" {
		return "", fmt.Errorf("no token for ServiceAccount %s/%s", namespace, name)
	}
	user := "system:serviceaccount:" + namespace + ":" + name
	config := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"local": {Server: e.Cluster.Server(), InsecureSkipTLSVerify: true}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{user: {Token: token}},
		Contexts:       map[string]*clientcmdapi.Context{"local": {Cluster: "local", AuthInfo: user}},
		CurrentContext: "local",
	}
	path := filepath.Join(e.Work, namespace+"-"+name+".kubeconfig")
	if err := clientcmd.WriteToFile(config, path); err != nil {
		return "", err
	}
	return path, os.Chmod(path, 0o600)
}
