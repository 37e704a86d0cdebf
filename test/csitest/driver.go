// Package csitest provides a controllable, in-memory CSI driver for tests.
//
// The driver implements the CSI Identity and Controller services and is
// served by a real gRPC server on a unix socket, so the code under test
// exercises the same transport, interceptors and error codes it meets in
// production. It behaves like a well-behaved driver (idempotent CreateVolume
// and DeleteVolume, NotFound for unknown content sources, OutOfRange for
// sizes smaller than the source) and records every request it receives so
// tests can assert on the CSI calls the sidecar made.
package csitest

import (
	"context"
	"maps"
	"sync"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/protobuf/proto"
)

// DefaultName is the driver name that GetPluginInfo reports unless WithName
// overrides it.
const DefaultName = "csitest.example.com"

// Version is the vendor version that GetPluginInfo reports.
const Version = "0.0.1"

// CreateVolumeHook lets a test take over a CreateVolume call. It runs after
// the request has been recorded and before the driver's own logic. When
// handled is false the driver ignores resp and err and proceeds normally, so
// a hook can inject a failure (or a delay) once and then let later calls
// through. When handled is true the driver returns resp and err to the client
// unchanged; a successful response's volume is also registered as live, so
// later calls with the same name and DeleteVolume see it.
//
// To simulate a driver that is still working when the client times out,
// block until ctx is done: the client then sees DeadlineExceeded.
type CreateVolumeHook func(ctx context.Context, req *csi.CreateVolumeRequest) (resp *csi.CreateVolumeResponse, err error, handled bool)

// GetCapacityHook answers a GetCapacity call. The driver has no capacity of
// its own: without a hook, GetCapacity is Unimplemented, as it was before
// the hook existed.
type GetCapacityHook func(ctx context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error)

// Driver is an in-memory CSI driver. All methods are safe for concurrent use.
type Driver struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedControllerServer

	address string

	// Immutable after Start.
	name           string
	pluginCaps     []csi.PluginCapability_Service_Type
	controllerCaps []csi.ControllerServiceCapability_RPC_Type
	topology       map[string]string

	mu             sync.Mutex
	snapshots      map[string]int64       // snapshot ID -> size in bytes
	volumes        map[string]*csi.Volume // volume ID -> volume
	volumeByName   map[string]string      // CreateVolume name -> volume ID
	nextID         int
	createRequests []*csi.CreateVolumeRequest
	deleteRequests []*csi.DeleteVolumeRequest
	createHook     CreateVolumeHook
	capacityReqs   []*csi.GetCapacityRequest
	capacityHook   GetCapacityHook
}

var (
	_ csi.IdentityServer   = (*Driver)(nil)
	_ csi.ControllerServer = (*Driver)(nil)
)

// Address returns the driver's endpoint as a "unix:///path" URL, which
// csi-lib-utils' connection.Connect (and therefore internal/sidecar/csi.Connect) accepts.
func (d *Driver) Address() string {
	return d.address
}

// CreateVolumeRequests returns copies of all CreateVolume requests the driver
// received, in the order they arrived, including failed ones.
func (d *Driver) CreateVolumeRequests() []*csi.CreateVolumeRequest {
	d.mu.Lock()
	defer d.mu.Unlock()
	return cloneAll(d.createRequests)
}

// DeleteVolumeRequests returns copies of all DeleteVolume requests the driver
// received, in the order they arrived.
func (d *Driver) DeleteVolumeRequests() []*csi.DeleteVolumeRequest {
	d.mu.Lock()
	defer d.mu.Unlock()
	return cloneAll(d.deleteRequests)
}

// Volumes returns copies of the volumes that currently exist in the driver,
// keyed by volume ID. It includes volumes added with WithVolume.
func (d *Driver) Volumes() map[string]*csi.Volume {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]*csi.Volume, len(d.volumes))
	for id, v := range d.volumes {
		out[id] = proto.CloneOf(v)
	}
	return out
}

// SetCreateVolumeHook installs hook for subsequent CreateVolume calls; nil
// removes it. See CreateVolumeHook for the contract.
func (d *Driver) SetCreateVolumeHook(hook CreateVolumeHook) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.createHook = hook
}

// SetGetCapacityHook installs hook to answer subsequent GetCapacity calls;
// nil removes it.
func (d *Driver) SetGetCapacityHook(hook GetCapacityHook) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.capacityHook = hook
}

// GetCapacityRequests returns copies of all GetCapacity requests the driver
// received, in the order they arrived, including failed ones.
func (d *Driver) GetCapacityRequests() []*csi.GetCapacityRequest {
	d.mu.Lock()
	defer d.mu.Unlock()
	return cloneAll(d.capacityReqs)
}

func cloneAll[M proto.Message](in []M) []M {
	out := make([]M, 0, len(in))
	for _, m := range in {
		out = append(out, proto.CloneOf(m))
	}
	return out
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	return maps.Clone(m)
}
