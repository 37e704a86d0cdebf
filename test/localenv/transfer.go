package localenv

import (
	"context"
	"path/filepath"

	"github.com/xns-csi/csi-provisioner/test/cluster"
)

// TransferServiceAccount is the ServiceAccount of deploy/transfer/rbac.yaml
// (namespace default), as which the storage-transfer-controller runs.
const TransferServiceAccount = "storage-transfer-controller"

// TransferController is one storage-transfer-controller process, its HTTP
// endpoint, and how to start it again.
type TransferController struct {
	*cluster.Process
	HTTPAddr string
	env      *Env
	name     string
	args     []string
}

// TransferBinary is this project's storage-transfer-controller (make
// build).
func (e *Env) TransferBinary() string {
	return filepath.Join(e.Root, "bin", "storage-transfer-controller")
}

// StartTransferController installs this project's CRDs and
// deploy/transfer/rbac.yaml (the shipped RBAC is what is tested), starts
// the controller as its ServiceAccount with its HTTP endpoint on a free
// port and extra arguments, and waits until it answers /healthz. Env.Stop
// stops it.
func (e *Env) StartTransferController(ctx context.Context, name string, extra ...string) (*TransferController, error) {
	if err := e.InstallProjectCRDs(ctx); err != nil {
		return nil, err
	}
	args, addr, err := e.controllerArgs(ctx, "transfer", TransferServiceAccount, extra)
	if err != nil {
		return nil, err
	}
	tc := &TransferController{HTTPAddr: addr, env: e, name: name, args: args}
	return tc, tc.Restart(ctx)
}

// Restart starts the controller again (after Kill, a crash) with the same
// arguments, and waits until it answers /healthz.
func (tc *TransferController) Restart(ctx context.Context) error {
	p, err := cluster.StartProcess(tc.name, tc.env.TransferBinary(), tc.args, tc.env.Work)
	if err != nil {
		return err
	}
	tc.Process = p
	tc.env.processes = append(tc.env.processes, p)
	return cluster.WaitHealthy(ctx, "http://"+tc.HTTPAddr+"/healthz", "", p)
}
