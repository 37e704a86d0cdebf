package csitest

import (
	"github.com/container-storage-interface/spec/lib/go/csi"
)

// Option configures a Driver started by Start.
type Option func(*Driver)

// WithName sets the driver name reported by GetPluginInfo.
func WithName(name string) Option {
	return func(d *Driver) { d.name = name }
}

// WithCapabilities replaces the default controller capabilities
// (CREATE_DELETE_VOLUME, CREATE_DELETE_SNAPSHOT, CLONE_VOLUME) with caps.
// Call it without arguments for a driver that advertises none.
func WithCapabilities(caps ...csi.ControllerServiceCapability_RPC_Type) Option {
	return func(d *Driver) {
		d.controllerCaps = append([]csi.ControllerServiceCapability_RPC_Type(nil), caps...)
	}
}

// WithAccessibilityConstraints makes the driver advertise (or not) the
// VOLUME_ACCESSIBILITY_CONSTRAINTS plugin capability, next to
// CONTROLLER_SERVICE.
func WithAccessibilityConstraints(enabled bool) Option {
	return func(d *Driver) {
		d.pluginCaps = []csi.PluginCapability_Service_Type{csi.PluginCapability_Service_CONTROLLER_SERVICE}
		if enabled {
			d.pluginCaps = append(d.pluginCaps, csi.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS)
		}
	}
}

// WithTopology sets the segments returned as the accessible topology of every
// volume the driver creates. Without it, volumes carry no topology.
func WithTopology(segments map[string]string) Option {
	return func(d *Driver) { d.topology = cloneMap(segments) }
}

// WithSnapshot registers an existing snapshot that CreateVolume can restore
// from.
func WithSnapshot(id string, sizeBytes int64) Option {
	return func(d *Driver) { d.snapshots[id] = sizeBytes }
}

// WithVolume registers a pre-existing volume, e.g. as a clone source. It
// appears in Volumes().
func WithVolume(id string, sizeBytes int64) Option {
	return func(d *Driver) {
		d.volumes[id] = &csi.Volume{VolumeId: id, CapacityBytes: sizeBytes}
	}
}
