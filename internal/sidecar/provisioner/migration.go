package provisioner

// CSI migration (KEP-625), as the upstream csi-provisioner v6.4.0 does it. A
// CSI driver that replaces an in-tree volume plugin (ebs.csi.aws.com for
// kubernetes.io/aws-ebs) provisions the claims of that plugin's
// StorageClasses and deletes the plugin's PVs once the PV controller hands
// them over (it marks them pv.kubernetes.io/migrated-to). The class is
// translated to CSI before the request is built, the new PV back to the
// in-tree source (the cluster keeps seeing the plugin's volume), and an
// in-tree PV to CSI to find the volume handle for DeleteVolume.
// csi-translation-lib translates; the functions here decide what is
// translated.

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/klog/v2"
)

// annMigratedTo is the annotation with which the PV controller hands an
// in-tree claim or PV to the CSI driver that replaces its plugin.
const annMigratedTo = "pv.kubernetes.io/migrated-to"

// Translator is the part of csi-translation-lib (k8s.io/csi-translation-lib)
// the provisioner uses; csitranslation.New() implements it.
type Translator interface {
	IsMigratedCSIDriverByName(csiPluginName string) bool
	GetInTreeNameFromCSIName(pluginName string) (string, error)
	TranslateInTreeStorageClassToCSI(logger klog.Logger, inTreePluginName string, sc *storagev1.StorageClass) (*storagev1.StorageClass, error)
	TranslateCSIPVToInTree(pv *v1.PersistentVolume) (*v1.PersistentVolume, error)
	IsPVMigratable(pv *v1.PersistentVolume) bool
	TranslateInTreePVToCSI(logger klog.Logger, pv *v1.PersistentVolume) (*v1.PersistentVolume, error)
}

// MigratedInTreePlugin returns the in-tree volume plugin whose classes and
// volumes the CSI driver driverName serves under CSI migration, e.g.
// kubernetes.io/aws-ebs for ebs.csi.aws.com, and "" when it replaces none.
// The sidecar registers that name with the controller library as an
// additional provisioner name, as upstream does, so that the claims of the
// plugin's classes reach the provisioner.
func MigratedInTreePlugin(t Translator, driverName string) string {
	if !t.IsMigratedCSIDriverByName(driverName) {
		return ""
	}
	name, err := t.GetInTreeNameFromCSIName(driverName)
	if err != nil {
		return "" // not reached: the library answers both from one table
	}
	return name
}

// migration is what the provisioner needs for CSI migration: the
// translator and the in-tree plugin its driver replaces ("" for none).
type migration struct {
	translator   Translator
	inTreePlugin string
}

// inTreeClass reports whether class is one of the replaced plugin's. As
// upstream, the class's provisioner decides, not the claim's annotations:
// the PV controller writes the CSI driver's name there for a migrated claim.
func (m migration) inTreeClass(class *storagev1.StorageClass) bool {
	return m.inTreePlugin != "" && class.Provisioner == m.inTreePlugin
}

// classToCSI returns the CSI form of an in-tree class (the plugin's
// parameters and zones in the driver's terms), and any other class
// unchanged.
func (m migration) classToCSI(ctx context.Context, class *storagev1.StorageClass) (*storagev1.StorageClass, error) {
	if !m.inTreeClass(class) {
		return class, nil
	}
	logger := klog.FromContext(ctx)
	logger.V(2).Info("Translating the in-tree StorageClass to CSI", "storageClass", class.Name, "plugin", m.inTreePlugin)
	csiClass, err := m.translator.TranslateInTreeStorageClassToCSI(logger, m.inTreePlugin, class)
	if err != nil {
		return nil, fmt.Errorf("failed to translate storage class: %w", err)
	}
	return csiClass, nil
}

// volumeToInTree returns, for a volume created for an in-tree class, its PV
// with the plugin's in-tree source, as upstream: the volume stays the
// plugin's for the cluster (and for a rollback of the migration). The PV of
// any other class is returned unchanged.
func (m migration) volumeToInTree(class *storagev1.StorageClass, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	if !m.inTreeClass(class) {
		return pv, nil
	}
	inTree, err := m.translator.TranslateCSIPVToInTree(pv)
	if err != nil {
		return nil, fmt.Errorf("failed to translate CSI PV to in-tree: %w", err)
	}
	return inTree, nil
}

// volumeToCSI returns the CSI form of a PV with an in-tree source the
// library can translate, and whether it was one. As upstream, every such PV
// is translated: the controller library passes only the PVs of this driver
// (provisioned by it or its in-tree plugin, or migrated to it).
func (m migration) volumeToCSI(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, bool, error) {
	if !m.translator.IsPVMigratable(pv) {
		return pv, false, nil
	}
	csiPV, err := m.translator.TranslateInTreePVToCSI(klog.FromContext(ctx), pv)
	if err != nil {
		return nil, true, fmt.Errorf("failed to translate in-tree PV %s to CSI: %w", pv.Name, err)
	}
	return csiPV, true, nil
}
