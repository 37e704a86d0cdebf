package sidecar

import (
	"context"

	csitranslation "k8s.io/csi-translation-lib"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"

	"github.com/xns-csi/csi-provisioner/internal/sidecar/provisioner"
)

// migrationOption registers with the controller library, as upstream, the
// in-tree plugin the CSI driver replaces under CSI migration (e.g.
// kubernetes.io/aws-ebs for ebs.csi.aws.com) as an additional provisioner
// name: the claims of the plugin's StorageClasses are then provisioned,
// and its PVs deleted, by this sidecar (package provisioner translates
// them). For other drivers it registers nothing.
func migrationOption(ctx context.Context, driverName string) func(*controller.ProvisionController) error {
	names := additionalProvisionerNames(driverName)
	if len(names) > 0 {
		klog.FromContext(ctx).V(2).Info("Supports migration from in-tree plugin", "plugin", names[0])
	}
	return controller.AdditionalProvisionerNames(names)
}

// additionalProvisionerNames are the provisioner names the library serves
// besides the driver's own: the replaced in-tree plugin's, if any.
func additionalProvisionerNames(driverName string) []string {
	if name := provisioner.MigratedInTreePlugin(csitranslation.New(), driverName); name != "" {
		return []string{name}
	}
	return nil
}
