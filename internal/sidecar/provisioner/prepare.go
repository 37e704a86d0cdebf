package provisioner

import (
	"context"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"

	"github.com/xns-csi/csi-provisioner/internal/sidecar/classparams"
)

// prepare reads what the request needs besides the source and the topology
// (the class's fsType and secrets, the provisioner secret's data, the
// claim's VolumeAttributesClass) and builds
// the CreateVolume request. It writes nothing. The secret references are
// returned for the PV.
func (p *Provisioner) prepare(ctx context.Context, opts controller.ProvisionOptions, content *csi.VolumeContentSource, topo *csi.TopologyRequirement) (*csi.CreateVolumeRequest, classparams.SecretRefs, error) {
	claim, class := opts.PVC, opts.StorageClass
	if deprecated := classparams.Deprecated(class.Parameters); len(deprecated) > 0 {
		klog.FromContext(ctx).Info("StorageClass uses deprecated parameters", "storageClass", class.Name, "parameters", deprecated)
	}
	fsType, err := classparams.FSType(class.Parameters, p.opts.DefaultFSType)
	if err != nil {
		return nil, nil, err
	}
	refs, err := resolveSecrets(class.Parameters, opts.PVName, claim)
	if err != nil {
		return nil, nil, err
	}
	secret, err := p.readSecret(ctx, refs[classparams.ProvisionerSecret])
	if err != nil {
		return nil, nil, err
	}
	mutable, err := p.mutableParameters(claim)
	if err != nil {
		return nil, nil, err
	}
	req, err := buildRequest(requestInput{opts: p.opts, claim: claim, class: class, pvName: opts.PVName, fsType: fsType,
		multiWriter: p.caps.SingleNodeMultiWriter, contentSource: content, topology: topo, secrets: secret,
		mutableParameters: mutable})
	if err != nil {
		return nil, nil, err
	}
	return req, refs, nil
}
