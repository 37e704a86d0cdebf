package provisioner

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
)

// AttributesClasses reads VolumeAttributesClasses from a cache. Get's error
// wraps optionalapi.ErrNotServed while the cluster does not serve the
// storage.k8s.io/v1 API.
type AttributesClasses interface {
	Get(name string) (*storagev1.VolumeAttributesClass, error)
}

// lookupAttributesClass returns the name of the claim's
// VolumeAttributesClass when the VolumeAttributesClass feature applies to
// it, with the class as the cache has it or the lookup's error; "" when it
// does not apply. As upstream, the feature is off when its gate is set off,
// and, when the gate is not set, while the cluster does not serve
// storage.k8s.io/v1 VolumeAttributesClasses (upstream decides that once at
// start; here it is looked up each time, so a cluster upgraded later needs
// no restart).
func (p *Provisioner) lookupAttributesClass(claim *v1.PersistentVolumeClaim) (string, *storagev1.VolumeAttributesClass, error) {
	gate := p.opts.VolumeAttributesClass
	name := claim.Spec.VolumeAttributesClassName
	if name == nil || *name == "" || p.attributesClasses == nil || (gate != nil && !*gate) {
		return "", nil, nil
	}
	class, err := p.attributesClasses.Get(*name)
	if gate == nil && errors.Is(err, optionalapi.ErrNotServed) {
		return "", nil, nil
	}
	return *name, class, err
}

// mutableParameters returns the parameters of the claim's
// VolumeAttributesClass for CreateVolume's mutable_parameters, nil when the
// claim names none (or the feature is off).
func (p *Provisioner) mutableParameters(claim *v1.PersistentVolumeClaim) (map[string]string, error) {
	name, class, err := p.lookupAttributesClass(claim)
	if name == "" {
		return nil, nil
	}
	return classParameters(name, class, err, p.caps.ModifyVolume, p.driverName)
}

// classParameters decides, as upstream, whether the claim's
// VolumeAttributesClass (or the error looking it up) can be used with this
// driver, and returns its parameters.
func classParameters(name string, class *storagev1.VolumeAttributesClass, lookupErr error, modifyVolume bool, driverName string) (map[string]string, error) {
	switch {
	case !modifyVolume:
		return nil, errors.New("CSI driver does not support VolumeAttributesClass: controller MODIFY_VOLUME capability is not reported")
	case lookupErr != nil:
		return nil, lookupErr
	case class.DriverName != driverName:
		return nil, fmt.Errorf("VAC %s referenced in PVC is for driver %s which does not match driver name %s", name, class.DriverName, driverName)
	}
	return class.Parameters, nil
}
