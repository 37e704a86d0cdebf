package provisioner

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/sidecar/classparams"
)

// CSI migration as upstream v6.4.0 does it (its TestProvisionWithMigration
// and TestDeleteMigration), with the real csi-translation-lib: the driver
// is AWS EBS, which replaces the in-tree plugin kubernetes.io/aws-ebs.

const (
	ebsDriver = "ebs.csi.aws.com"
	ebsPlugin = "kubernetes.io/aws-ebs"
	// annProvisionedBy is the library's annotation of the provisioner that
	// made a PV.
	annProvisionedBy = "pv.kubernetes.io/provisioned-by"
)

// ebsClass is the class "fast" of provisioner with upstream's fstype ext3,
// and iopsPerGB, which the translation completes with
// allowautoiopspergbincrease (spelled so by the library).
func ebsClass(provisioner string, opts ...classOption) *storagev1.StorageClass {
	opts = append([]classOption{func(c *storagev1.StorageClass) { c.Provisioner = provisioner },
		param("fstype", "ext3"), param("iopsPerGB", "10")}, opts...)
	return newClass(opts...)
}

// claimAnnotated is test/data of class "fast" with the annotations kv.
func claimAnnotated(kv ...string) *v1.PersistentVolumeClaim {
	claim := newClaim(func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("fast") })
	for i := 0; i+1 < len(kv); i += 2 {
		annotated(kv[i], kv[i+1])(claim)
	}
	return claim
}

// inTreeVolume is the released PV pvName of test/data in class "fast" that
// the in-tree plugin provisioned: the EBS volume vol-0123 in us-east-1a.
func inTreeVolume(opts ...volumeOption) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName, Annotations: map[string]string{annProvisionedBy: ebsPlugin}},
		Spec: v1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete, StorageClassName: "fast",
			ClaimRef: &v1.ObjectReference{Namespace: "test", Name: "data", UID: claimUID},
			PersistentVolumeSource: v1.PersistentVolumeSource{
				AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws://us-east-1a/vol-0123", FSType: "ext4"}},
		},
	}
	for _, o := range opts {
		o(pv)
	}
	return pv
}

// The transcript lines of the claim test/data.
const (
	createTranslated  = create + " (migrated) with parameters map[allowautoiopspergbincrease:true iopsPerGB:10] fsType \"ext3\""
	createNative      = create + " with parameters map[fstype:ext3 iopsPerGB:10] fsType \"ext3\""
	provisionedInTree = "provision test/data: Finished, PV " + pvName + " of in-tree EBS volume id-" + pvName
	notMigrated       = "provision test/data: Finished, ignored: PVC annotated with external-provisioner name %s does not match provisioner driver name " +
		ebsDriver + ". This could mean the PVC is not migrated"
)

func TestProvisionWithMigration(t *testing.T) {
	inTree, native := ebsClass(ebsPlugin), ebsClass(ebsDriver)
	cases := []frameworkCase{
		{
			name:    "an in-tree class's claim handed over by the PV controller gets a translated request and an in-tree PV",
			objects: []runtime.Object{inTree, claimAnnotated(annBetaStorageProvisioner, ebsDriver)},
			steps:   []step{provision("test/data", created)},
			want:    []string{createTranslated, provisionedInTree},
		},
		{
			name:    "the same with the GA storage-provisioner annotation",
			objects: []runtime.Object{inTree, claimAnnotated(annStorageProvisioner, ebsDriver)},
			steps:   []step{provision("test/data", created)},
			want:    []string{createTranslated, provisionedInTree},
		},
		{
			name:    "a CSI class's claim is not translated",
			objects: []runtime.Object{native, claimAnnotated(annBetaStorageProvisioner, ebsDriver)},
			steps:   []step{provision("test/data", created)},
			want:    []string{createNative, provisioned},
		},
		{
			name:    "a CSI class's claim with the GA annotation is not translated",
			objects: []runtime.Object{native, claimAnnotated(annStorageProvisioner, ebsDriver)},
			steps:   []step{provision("test/data", created)},
			want:    []string{createNative, provisioned},
		},
		{
			name:    "a claim annotated for the in-tree plugin and migrated to the driver is translated",
			objects: []runtime.Object{inTree, claimAnnotated(annBetaStorageProvisioner, ebsPlugin, annMigratedTo, ebsDriver)},
			steps:   []step{provision("test/data", created)},
			want:    []string{createTranslated, provisionedInTree},
		},
		{
			name:    "a claim annotated for the driver and migrated to it is translated",
			objects: []runtime.Object{inTree, claimAnnotated(annBetaStorageProvisioner, ebsDriver, annMigratedTo, ebsDriver)},
			steps:   []step{provision("test/data", created)},
			want:    []string{createTranslated, provisionedInTree},
		},
		{
			name:    "a claim migrated to another driver is not provisioned",
			objects: []runtime.Object{inTree, claimAnnotated(annBetaStorageProvisioner, ebsPlugin, annMigratedTo, "foo")},
			steps:   []step{provision("test/data"), provisionUnfiltered("test/data")},
			want:    []string{"provision test/data: left alone", fmt.Sprintf(notMigrated, ebsPlugin)},
		},
		{
			name:    "a claim of another provisioner migrated to another driver is not provisioned",
			objects: []runtime.Object{inTree, claimAnnotated(annBetaStorageProvisioner, "foo", annMigratedTo, "foo")},
			steps:   []step{provision("test/data"), provisionUnfiltered("test/data")},
			want:    []string{"provision test/data: left alone", fmt.Sprintf(notMigrated, "foo")},
		},
		{
			name:    "an in-tree claim the PV controller provisions itself is left to it",
			objects: []runtime.Object{inTree, claimAnnotated(annBetaStorageProvisioner, ebsPlugin)},
			steps:   []step{provision("test/data"), provisionUnfiltered("test/data")},
			want:    []string{"provision test/data: left alone", fmt.Sprintf(notMigrated, ebsPlugin)},
		},
		{
			name: "an in-tree class the library cannot translate is refused before anything is called",
			objects: []runtime.Object{ebsClass(ebsPlugin, param("zone", "us-east-1a"), func(c *storagev1.StorageClass) {
				c.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{
					{Key: v1.LabelTopologyZone, Values: []string{"us-east-1b"}}}}}
			}), claimAnnotated(annStorageProvisioner, ebsDriver)},
			steps: []step{provision("test/data")},
			want: []string{"provision test/data: NoChange, error: failed to translate storage class: " +
				"cannot simultaneously set allowed topologies and zone/zones parameters"},
		},
		{
			// Upstream hands its Delete the nil PV of the failed
			// translation and retries in the background for ever.
			name:    "a volume whose PV cannot be translated back to in-tree is deleted again",
			objects: []runtime.Object{inTree, claimAnnotated(annStorageProvisioner, ebsDriver)},
			steps:   []step{provision("test/data", answer{volumeContext: map[string]string{"partition": "first"}}, deleted)},
			want: []string{createTranslated, "DeleteVolume id-" + pvName + " (migrated)",
				`provision test/data: Finished, error: failed to translate CSI PV to in-tree: failed to convert partition first to integer: ` +
					`strconv.Atoi: parsing "first": invalid syntax; the volume was deleted again`},
		},
	}
	for i := range cases {
		cases[i].driverName, cases[i].showParameters = ebsDriver, true
	}
	runFramework(t, cases)
}

func TestDeleteMigration(t *testing.T) {
	prov := classparams.ProvisionerSecret
	gcePD := inTreeVolume(func(pv *v1.PersistentVolume) {
		pv.Spec.AWSElasticBlockStore = nil
		pv.Spec.GCEPersistentDisk = &v1.GCEPersistentDiskVolumeSource{PDName: "disk-1"}
	})
	native := provisionedVolume()
	native.Spec.CSI.Driver = ebsDriver
	cases := []frameworkCase{
		{
			name:    "an in-tree PV is deleted by the volume handle of its CSI translation",
			objects: []runtime.Object{ebsClass(ebsPlugin), inTreeVolume()},
			steps:   []step{deleteVolume(pvName, deleted)},
			want:    []string{"DeleteVolume vol-0123 (migrated)", "delete " + pvName + ": done"},
		},
		{
			name:    "a CSI PV is deleted by its own handle",
			objects: []runtime.Object{native},
			steps:   []step{deleteVolume(pvName, deleted)},
			want:    []string{"DeleteVolume id-" + pvName, "delete " + pvName + ": done"},
		},
		{
			name: "a migrated PV without secret annotations finds the provisioner secret in its in-tree class",
			objects: []runtime.Object{ebsClass(ebsPlugin, param(prov.NameKey, "creds"), param(prov.NamespaceKey, "kube-system")),
				inTreeVolume(), credentials()},
			steps: []step{deleteVolume(pvName, deleted)},
			want:  []string{"DeleteVolume vol-0123 (migrated) with secret password", "delete " + pvName + ": done"},
		},
		{
			name:    "an attached in-tree PV is not deleted",
			caps:    attaching,
			objects: []runtime.Object{inTreeVolume(), attachment()},
			steps:   []step{deleteVolume(pvName)},
			want:    []string{"delete " + pvName + ": in use: persistentvolume " + pvName + " is still attached to node node-1, waiting for detach"},
		},
		{
			name:    "another plugin's in-tree PV is not this driver's",
			objects: []runtime.Object{gcePD},
			steps:   []step{deleteVolume(pvName)},
			want:    []string{"delete " + pvName + `: ignored: PV ` + pvName + ` is not a volume of CSI driver "` + ebsDriver + `"`},
		},
		{
			name: "an in-tree PV the library cannot translate is not deleted",
			objects: []runtime.Object{inTreeVolume(func(pv *v1.PersistentVolume) {
				pv.Spec.AWSElasticBlockStore.VolumeID = "aws://us-east-1a/disk-1"
			})},
			steps: []step{deleteVolume(pvName)},
			want: []string{"delete " + pvName + ": error: failed to translate in-tree PV " + pvName + " to CSI: " +
				"failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://us-east-1a/disk-1)"},
		},
	}
	for i := range cases {
		cases[i].driverName = ebsDriver
	}
	runFramework(t, cases)
}

// A driver that replaces no in-tree plugin serves no in-tree class: the
// library would not hand it such a claim, and if it did the class would go
// to the driver untranslated.
func TestNoMigrationForOtherDrivers(t *testing.T) {
	runFramework(t, []frameworkCase{{
		name:           "a claim of an in-tree class is not translated for another driver",
		showParameters: true,
		objects:        []runtime.Object{ebsClass(ebsPlugin), ours()},
		steps:          []step{provision("test/data", created)},
		want:           []string{create + " with parameters map[fstype:ext3 iopsPerGB:10] fsType \"ext3\"", provisioned},
	}})
}
