// Package localdriver is a small CSI driver that keeps real data on local
// disk, for the provisioner's end-to-end tests and for demos.
//
// Each volume is a directory <state-dir>/volumes/<volume-id>/, and each
// snapshot is a full copy <state-dir>/snapshots/<snapshot-id>/ of its source
// volume's directory, taken when CreateSnapshot runs. Restoring a snapshot
// or cloning a volume copies the files into the new volume, so a test can
// write data, take a snapshot, change the source, restore, and find the
// content as it was at snapshot time.
//
// The metadata of each object (name, capacity, content source, creation
// time, a volume's mutable parameters) is kept as JSON next to its data, in
// <state-dir>/volumes/<id>.json and <state-dir>/snapshots/<id>.json, so a
// restarted driver keeps its volumes and snapshots and stays idempotent by
// name. The JSON file is the commit point: it is written once the data is
// in place and removed before the data is, and a data directory without
// one, left behind by an interrupted call, is removed when the driver
// starts.
//
// The driver serves the Identity, Controller and Node services on one unix
// socket. NodePublishVolume makes the target path a symbolic link to the
// volume's directory instead of mounting anything, so the driver needs no
// privileges; Block volumes are directories too, and the readonly flag is
// not enforced. Capacity is bookkeeping only: nothing stops a volume from
// holding more than it, and GetCapacity reports the configured pool less
// what the volumes and snapshots hold. With a topology configured, the
// driver's storage sits in that one segment: NodeGetInfo reports it,
// volumes are accessible there, and GetCapacity reports capacity for it
// and none for other segments. One mutex serializes every call, copies
// included, which is fine for the test-sized data the driver is meant for.
package localdriver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"k8s.io/klog/v2"
)

// DefaultName is the driver name that the command uses when --name is not
// given.
const DefaultName = "local.csi.example.com"

// DefaultCapacityBytes is the capacity of a new volume whose request asks
// for no particular size and has no content source.
const DefaultCapacityBytes int64 = 1 << 20

// DefaultCapacityPoolBytes is the pool GetCapacity reports from when
// Config.CapacityBytes is not set.
const DefaultCapacityPoolBytes int64 = 100 << 30

// Version is the vendor version that GetPluginInfo reports.
const Version = "0.1.0"

// driverName is the form the CSI spec requires of a driver name: at most 63
// characters, alphanumerics, '-', '_' and '.', beginning and ending with an
// alphanumeric.
var driverName = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9._-]{0,61}[a-zA-Z0-9])?$`)

// Config configures a Driver and Run. The command binds its flags to it.
type Config struct {
	// Endpoint is where Run serves the driver: a unix socket path or a
	// unix:// URL. New does not use it.
	Endpoint string
	// StateDir holds the volumes, the snapshots and their metadata. It is
	// created if it does not exist.
	StateDir string
	// Name is the driver name that GetPluginInfo reports.
	Name string
	// NodeID is the node ID that NodeGetInfo reports.
	NodeID string
	// RestoreDelay makes every CreateVolume with a content source wait this
	// long first, like a driver that copies a lot of data. Tests use it to
	// act while a restore is in flight.
	RestoreDelay time.Duration
	// CapacityBytes is the size of the storage pool that GetCapacity
	// reports from; zero means DefaultCapacityPoolBytes.
	CapacityBytes int64
	// Topology is the topology segment of the driver's storage, e.g.
	// {"topology.local.csi.example.com/node": "node-1"}; empty means none
	// (the storage is reachable from everywhere, as before).
	Topology map[string]string
	// FaultsFile, if set, is a JSON Faults file read on every call: the
	// fault switches of the fault-injection suite. A missing file injects
	// nothing.
	FaultsFile string
	// CallLog, if set, is a file the driver appends a CallRecord to when a
	// call starts and ends.
	CallLog string
}

// Validate checks every field Run needs. It changes nothing.
func (c Config) Validate() error {
	var errs []error
	if c.Endpoint == "" {
		errs = append(errs, errors.New("endpoint is empty"))
	} else if _, err := socketPath(c.Endpoint); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.validateDriver())
	return errors.Join(errs...)
}

// validateDriver checks the fields New needs.
func (c Config) validateDriver() error {
	var errs []error
	if c.StateDir == "" {
		errs = append(errs, errors.New("state directory is empty"))
	}
	if !driverName.MatchString(c.Name) {
		errs = append(errs, fmt.Errorf("driver name %q is not a valid CSI driver name", c.Name))
	}
	if c.NodeID == "" {
		errs = append(errs, errors.New("node ID is empty"))
	}
	if c.CapacityBytes < 0 {
		errs = append(errs, fmt.Errorf("capacity of %d bytes is negative", c.CapacityBytes))
	}
	for k := range c.Topology {
		if k == "" {
			errs = append(errs, errors.New("topology has an empty key"))
		}
	}
	return errors.Join(errs...)
}

// Driver is the local CSI driver. All methods are safe for concurrent use.
type Driver struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedControllerServer
	csi.UnimplementedNodeServer

	name         string
	nodeID       string
	layout       layout
	restoreDelay time.Duration
	// capacityBytes is the pool size; topology the storage's segment, nil
	// for none.
	capacityBytes int64
	topology      map[string]string
	// faultsFile and callLog are Config's.
	faultsFile, callLog string

	// mu guards the maps and every change on disk below the state
	// directory; the maps mirror the metadata files.
	mu             sync.Mutex
	volumes        map[string]*volumeRecord // volume ID -> volume
	volumeByName   map[string]string        // CreateVolume name -> volume ID
	snapshots      map[string]*snapshotRecord
	snapshotByName map[string]string
	// restoring counts the CreateVolume calls restoring each snapshot; a
	// snapshot being restored cannot be deleted, as on real storage.
	restoring map[string]int
}

var (
	_ csi.IdentityServer   = (*Driver)(nil)
	_ csi.ControllerServer = (*Driver)(nil)
	_ csi.NodeServer       = (*Driver)(nil)
)

// New returns a driver that keeps its state in cfg.StateDir, loading the
// volumes and snapshots a previous run left there. cfg.Endpoint is not used.
func New(ctx context.Context, cfg Config) (*Driver, error) {
	if err := cfg.validateDriver(); err != nil {
		return nil, fmt.Errorf("invalid driver configuration: %w", err)
	}
	root, err := filepath.Abs(cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("resolve state directory %q: %w", cfg.StateDir, err)
	}
	d := &Driver{
		name:          cfg.Name,
		nodeID:        cfg.NodeID,
		layout:        layout{root: root},
		restoreDelay:  cfg.RestoreDelay,
		restoring:     map[string]int{},
		capacityBytes: cfg.CapacityBytes,
		faultsFile:    cfg.FaultsFile,
		callLog:       cfg.CallLog,
	}
	if d.capacityBytes == 0 {
		d.capacityBytes = DefaultCapacityPoolBytes
	}
	if len(cfg.Topology) > 0 {
		d.topology = maps.Clone(cfg.Topology)
	}
	if err := d.load(ctx); err != nil {
		return nil, fmt.Errorf("load state from %s: %w", root, err)
	}
	klog.FromContext(ctx).Info("Loaded driver state", "stateDir", root,
		"volumes", len(d.volumes), "snapshots", len(d.snapshots))
	return d, nil
}

// VolumeDir returns the directory that holds the data of the volume with
// the given ID. The directory exists only while the volume does.
func (d *Driver) VolumeDir(volumeID string) string {
	return d.layout.volumeDir(volumeID)
}

// SnapshotDir returns the directory that holds the data of the snapshot with
// the given ID. The directory exists only while the snapshot does.
func (d *Driver) SnapshotDir(snapshotID string) string {
	return d.layout.snapshotDir(snapshotID)
}

// mkdirAll creates dir and its parents for the driver's state.
func mkdirAll(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create directory: %w", err)
	}
	return nil
}
