package csi

import (
	"context"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/kubernetes-csi/csi-lib-utils/rpc"
)

// Capabilities is what the driver advertises that matters to provisioning.
// It is read once at startup; a driver does not change its capabilities
// without a restart.
type Capabilities struct {
	// ControllerService is the CONTROLLER_SERVICE plugin capability; without
	// it the driver cannot provision at all and the controller capabilities
	// below are not queried (they stay false).
	ControllerService bool
	// AccessibilityConstraints is the VOLUME_ACCESSIBILITY_CONSTRAINTS plugin
	// capability: the driver takes topology requirements and reports where
	// volumes are accessible.
	AccessibilityConstraints bool
	// CreateDeleteVolume is the CREATE_DELETE_VOLUME controller capability.
	CreateDeleteVolume bool
	// CloneVolume is the CLONE_VOLUME controller capability.
	CloneVolume bool
	// CreateDeleteSnapshot is the CREATE_DELETE_SNAPSHOT controller
	// capability, which the upstream provisioner requires before it restores
	// a volume from a snapshot.
	CreateDeleteSnapshot bool
	// SingleNodeMultiWriter is the SINGLE_NODE_MULTI_WRITER controller
	// capability (ReadWriteOncePod and the single-node access modes).
	SingleNodeMultiWriter bool
	// GetCapacity is the GET_CAPACITY controller capability.
	GetCapacity bool
	// ModifyVolume is the MODIFY_VOLUME controller capability
	// (VolumeAttributesClass).
	ModifyVolume bool
	// PublishUnpublishVolume is the PUBLISH_UNPUBLISH_VOLUME controller
	// capability: volumes are attached (VolumeAttachments), so, as
	// upstream, one is not deleted while attached.
	PublishUnpublishVolume bool
}

// SupportsSnapshotRestore reports whether the driver can create a volume from
// a snapshot. Like the upstream provisioner, it requires
// CREATE_DELETE_SNAPSHOT; CSI has no capability specific to restore.
func (c Capabilities) SupportsSnapshotRestore() bool {
	return c.CreateDeleteVolume && c.CreateDeleteSnapshot
}

// SupportsClone reports whether the driver can create a volume from another
// volume.
func (c Capabilities) SupportsClone() bool {
	return c.CreateDeleteVolume && c.CloneVolume
}

// Capabilities queries the driver's plugin capabilities and, if it has a
// controller service, its controller capabilities.
func (c *Client) Capabilities(ctx context.Context) (Capabilities, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	plugin, err := rpc.GetPluginCapabilities(ctx, c.conn)
	if err != nil {
		return Capabilities{}, fmt.Errorf("get CSI plugin capabilities: %w", err)
	}
	caps := Capabilities{
		ControllerService:        plugin[csi.PluginCapability_Service_CONTROLLER_SERVICE],
		AccessibilityConstraints: plugin[csi.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS],
	}
	if !caps.ControllerService {
		return caps, nil
	}

	controller, err := rpc.GetControllerCapabilities(ctx, c.conn)
	if err != nil {
		return Capabilities{}, fmt.Errorf("get CSI controller capabilities: %w", err)
	}
	caps.CreateDeleteVolume = controller[csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME]
	caps.CloneVolume = controller[csi.ControllerServiceCapability_RPC_CLONE_VOLUME]
	caps.CreateDeleteSnapshot = controller[csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT]
	caps.SingleNodeMultiWriter = controller[csi.ControllerServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER]
	caps.GetCapacity = controller[csi.ControllerServiceCapability_RPC_GET_CAPACITY]
	caps.ModifyVolume = controller[csi.ControllerServiceCapability_RPC_MODIFY_VOLUME]
	caps.PublishUnpublishVolume = controller[csi.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME]
	return caps, nil
}
