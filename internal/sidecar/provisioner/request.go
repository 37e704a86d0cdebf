package provisioner

import (
	"fmt"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/kubernetes-csi/csi-lib-utils/accessmodes"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/classparams"
)

// Parameters added to CreateVolume by --extra-create-metadata, as in the
// upstream csi-provisioner.
const (
	pvcNameKey      = "csi.storage.k8s.io/pvc/name"
	pvcNamespaceKey = "csi.storage.k8s.io/pvc/namespace"
	pvNameKey       = "csi.storage.k8s.io/pv/name"
)

// Options are the sidecar flags that shape requests and volumes.
type Options struct {
	// VolumeNamePrefix and VolumeNameUUIDLength build the CSI volume name
	// from the claim's UID (--volume-name-prefix, --volume-name-uuid-length;
	// a negative length keeps the whole UID).
	VolumeNamePrefix     string
	VolumeNameUUIDLength int
	// DefaultFSType applies when the StorageClass sets no fsType.
	DefaultFSType string
	// ExtraCreateMetadata adds the claim's and PV's names to the parameters.
	ExtraCreateMetadata bool
	// StrictTopology and ImmediateTopology, see package topology.
	StrictTopology, ImmediateTopology bool
	// ControllerPublishReadOnly marks ReadOnlyMany volumes read-only in the PV
	// so ControllerPublishVolume is called read-only.
	ControllerPublishReadOnly bool
	// PreventVolumeModeConversion refuses restoring a snapshot with another
	// volume mode unless its content allows it.
	PreventVolumeModeConversion bool
	// VolumeAttributesClass is the VolumeAttributesClass feature gate as set
	// on the command line, nil when it is not set: then, as upstream, the
	// feature is on while the cluster serves storage.k8s.io/v1
	// VolumeAttributesClasses (see Provisioner.lookupAttributesClass).
	VolumeAttributesClass *bool
}

// VolumeName derives the CSI volume name from the claim's UID, so retries
// and restarts ask the driver for the same volume (CreateVolume is
// idempotent by name). As in the upstream csi-provisioner, a negative length
// keeps the whole UID with its dashes, so a sidecar replacing the upstream
// one retries an interrupted CreateVolume under the same name.
func VolumeName(opts Options, claim *v1.PersistentVolumeClaim) string {
	if opts.VolumeNameUUIDLength < 0 {
		return opts.VolumeNamePrefix + "-" + string(claim.UID)
	}
	uid := strings.ReplaceAll(string(claim.UID), "-", "")
	if opts.VolumeNameUUIDLength < len(uid) {
		uid = uid[:opts.VolumeNameUUIDLength]
	}
	return opts.VolumeNamePrefix + "-" + uid
}

// requestInput is what buildRequest needs, gathered beforehand.
type requestInput struct {
	opts          Options
	claim         *v1.PersistentVolumeClaim
	class         *storagev1.StorageClass
	pvName        string
	multiWriter   bool   // driver has SINGLE_NODE_MULTI_WRITER
	fsType        string // from the class or --default-fstype (classparams.FSType)
	contentSource *csi.VolumeContentSource
	topology      *csi.TopologyRequirement
	secrets       map[string]string
	// mutableParameters are the claim's VolumeAttributesClass parameters.
	mutableParameters map[string]string
}

// buildRequest turns a claim and its class into a CreateVolume request.
func buildRequest(in requestInput) (*csi.CreateVolumeRequest, error) {
	params, err := classparams.DriverParameters(in.class.Parameters)
	if err != nil {
		return nil, err
	}
	if in.opts.ExtraCreateMetadata {
		params[pvcNameKey] = in.claim.Name
		params[pvcNamespaceKey] = in.claim.Namespace
		params[pvNameKey] = in.pvName
	}
	capabilities, err := volumeCapabilities(in)
	if err != nil {
		return nil, err
	}
	capacity := &csi.CapacityRange{RequiredBytes: claimsource.RequestedBytes(in.claim)}
	if limit, ok := in.claim.Spec.Resources.Limits[v1.ResourceStorage]; ok {
		capacity.LimitBytes = limit.Value()
		if capacity.LimitBytes > 0 && capacity.LimitBytes < capacity.RequiredBytes {
			return nil, fmt.Errorf("the claim's storage limit %d is below its request %d", capacity.LimitBytes, capacity.RequiredBytes)
		}
	}
	return &csi.CreateVolumeRequest{
		Name:                      VolumeName(in.opts, in.claim),
		CapacityRange:             capacity,
		VolumeCapabilities:        capabilities,
		Parameters:                params,
		Secrets:                   in.secrets,
		VolumeContentSource:       in.contentSource,
		AccessibilityRequirements: in.topology,
		MutableParameters:         in.mutableParameters,
	}, nil
}

// volumeCapabilities are, as upstream, one capability for each of the
// claim's access modes, with its volume mode, fsType and mount options: a
// ReadWriteOnce and ReadOnlyMany claim asks for a volume that can be both.
func volumeCapabilities(in requestInput) ([]*csi.VolumeCapability, error) {
	capabilities := make([]*csi.VolumeCapability, 0, len(in.claim.Spec.AccessModes))
	for _, mode := range in.claim.Spec.AccessModes {
		c, err := volumeCapability(in, mode)
		if err != nil {
			return nil, err
		}
		capabilities = append(capabilities, c)
	}
	return capabilities, nil
}

// volumeCapability maps one access mode, the volume mode, fsType and mount
// options.
func volumeCapability(in requestInput, accessMode v1.PersistentVolumeAccessMode) (*csi.VolumeCapability, error) {
	mode, err := accessmodes.ToCSIAccessMode([]v1.PersistentVolumeAccessMode{accessMode}, in.multiWriter)
	if err != nil {
		return nil, fmt.Errorf("access mode %v: %w", accessMode, err)
	}
	capability := &csi.VolumeCapability{AccessMode: &csi.VolumeCapability_AccessMode{Mode: mode}}
	if in.claim.Spec.VolumeMode != nil && *in.claim.Spec.VolumeMode == v1.PersistentVolumeBlock {
		capability.AccessType = &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}}
		return capability, nil
	}
	capability.AccessType = &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{
		FsType:     in.fsType,
		MountFlags: in.class.MountOptions,
	}}
	return capability, nil
}

// requestedFSType is the fsType a request asks for: the volume's fsType in
// its PV ("" for a block volume).
func requestedFSType(req *csi.CreateVolumeRequest) string {
	for _, c := range req.GetVolumeCapabilities() {
		if t := c.GetMount().GetFsType(); t != "" {
			return t
		}
	}
	return ""
}
