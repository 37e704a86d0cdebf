package provisioner

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	csitranslation "k8s.io/csi-translation-lib"
	"k8s.io/klog/v2/ktesting"
)

// ebsMigration is the migration of the AWS EBS driver, translated by the
// real library.
var ebsMigration = migration{translator: csitranslation.New(), inTreePlugin: ebsPlugin}

// tableOutOfStep is a translator whose two name lookups disagree.
type tableOutOfStep struct{ Translator }

func (tableOutOfStep) IsMigratedCSIDriverByName(string) bool { return true }
func (tableOutOfStep) GetInTreeNameFromCSIName(string) (string, error) {
	return "", errors.New("no in-tree plugin")
}

func TestMigratedInTreePlugin(t *testing.T) {
	tests := []struct {
		name       string
		translator Translator
		driver     string
		want       string
	}{
		{name: "the AWS EBS driver replaces kubernetes.io/aws-ebs", translator: csitranslation.New(), driver: ebsDriver, want: ebsPlugin},
		{name: "the Azure disk driver replaces kubernetes.io/azure-disk", translator: csitranslation.New(), driver: "disk.csi.azure.com", want: "kubernetes.io/azure-disk"},
		{name: "another driver replaces none", translator: csitranslation.New(), driver: driver},
		{name: "a driver without an in-tree name replaces none", translator: tableOutOfStep{}, driver: ebsDriver},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MigratedInTreePlugin(tt.translator, tt.driver); got != tt.want {
				t.Errorf("MigratedInTreePlugin(%q) = %q, want %q", tt.driver, got, tt.want)
			}
		})
	}
}

// An in-tree class's zones become the driver's topology key, and an
// in-tree PV's node affinity goes back to the well-known zone label, so the
// volume is placed and scheduled as the in-tree plugin's would be.
func TestTranslationKeepsTheZones(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	csiClass, err := ebsMigration.classToCSI(ctx, ebsClass(ebsPlugin, param("zone", "us-east-1a")))
	if err != nil {
		t.Fatal(err)
	}
	if got := onlyRequirement(csiClass.AllowedTopologies); got.Key != "topology.ebs.csi.aws.com/zone" || len(got.Values) != 1 || got.Values[0] != "us-east-1a" {
		t.Errorf("translated class allows %+v, want topology.ebs.csi.aws.com/zone in [us-east-1a]", got)
	}

	pv := inTreeVolume()
	pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{"us-east-1a"}}}}}}}
	csiPV, migrated, err := ebsMigration.volumeToCSI(ctx, pv)
	if err != nil || !migrated {
		t.Fatalf("volumeToCSI() = %v, %v", migrated, err)
	}
	inTreePV, err := ebsMigration.volumeToInTree(ebsClass(ebsPlugin), csiPV)
	if err != nil {
		t.Fatal(err)
	}
	ebs := inTreePV.Spec.AWSElasticBlockStore
	if ebs == nil || ebs.VolumeID != "vol-0123" || ebs.FSType != "ext4" || inTreePV.Spec.CSI != nil {
		t.Errorf("round trip gave source %+v, want the EBS volume vol-0123 with ext4", inTreePV.Spec.PersistentVolumeSource)
	}
	zones := inTreePV.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions
	if len(zones) == 0 || zones[0].Key != v1.LabelTopologyZone {
		t.Errorf("round trip gave node affinity %+v, want %s", zones, v1.LabelTopologyZone)
	}
}

func TestOnlyInTreeObjectsAreTranslated(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	class := ebsClass(ebsDriver)
	if got, err := ebsMigration.classToCSI(ctx, class); err != nil || got != class {
		t.Errorf("classToCSI(CSI class) = %v, %v, want the class itself", got, err)
	}
	pv := provisionedVolume()
	if got, err := ebsMigration.volumeToInTree(class, pv); err != nil || got != pv {
		t.Errorf("volumeToInTree(PV of a CSI class) = %v, %v, want the PV itself", got, err)
	}
	if got, migrated, err := ebsMigration.volumeToCSI(ctx, pv); err != nil || migrated || got != pv {
		t.Errorf("volumeToCSI(CSI PV) = %v, %v, %v, want the PV itself", got, migrated, err)
	}
	none := migration{translator: csitranslation.New()}
	if none.inTreeClass(&storagev1.StorageClass{}) {
		t.Error("a driver that replaces no plugin counts a class without provisioner as in-tree")
	}
}

func onlyRequirement(terms []v1.TopologySelectorTerm) v1.TopologySelectorLabelRequirement {
	if len(terms) != 1 || len(terms[0].MatchLabelExpressions) != 1 {
		return v1.TopologySelectorLabelRequirement{}
	}
	return terms[0].MatchLabelExpressions[0]
}
