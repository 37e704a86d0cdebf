package provisioner

import (
	"maps"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/sidecar/classparams"
)

type createdOption func(*csi.Volume)

// newCreated is the driver's answer to CreateVolume: volume "vol-1" of 1Gi
// with a volume context; options change it.
func newCreated(opts ...createdOption) *csi.Volume {
	vol := &csi.Volume{VolumeId: "vol-1", CapacityBytes: 1 << 30, VolumeContext: map[string]string{"pool": "gold"}}
	for _, o := range opts {
		o(vol)
	}
	return vol
}

func withCapacity(bytes int64) createdOption { return func(v *csi.Volume) { v.CapacityBytes = bytes } }

func accessibleIn(segments ...map[string]string) createdOption {
	return func(v *csi.Volume) {
		for _, s := range segments {
			v.AccessibleTopology = append(v.AccessibleTopology, &csi.Topology{Segments: s})
		}
	}
}

// volumeFor is the input of buildVolume for a claim, class and driver
// answer, with the default options and fsType ext4.
func volumeFor(claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass, created *csi.Volume) volumeInput {
	return volumeInput{opts: defaultOpts, claim: claim, class: class, pvName: pvName, driverName: driver,
		identity: testIdentity, topology: true, fsType: "ext4", created: created}
}

func TestBuildVolume(t *testing.T) {
	tests := []struct {
		name string
		in   volumeInput
		want *v1.PersistentVolume
	}{
		{name: "a filesystem volume takes the claim's modes, the class's policy and the driver's answer",
			in: volumeFor(newClaim(), newClass(reclaiming(v1.PersistentVolumeReclaimRetain), mountOptions("noatime")),
				newCreated(withCapacity(2<<30))),
			want: &v1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{Name: pvName, Annotations: noDeletionSecret},
				Spec: v1.PersistentVolumeSpec{
					AccessModes:                   modes(v1.ReadWriteOnce),
					Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("2Gi")},
					PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
					MountOptions:                  []string{"noatime"},
					PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{
						Driver: driver, VolumeHandle: "vol-1", FSType: "ext4",
						VolumeAttributes: map[string]string{"pool": "gold", IdentityKey: testIdentity},
					}},
				},
			}},
		{name: "a block volume keeps its volume mode and has no fsType",
			in: volumeFor(newClaim(volumeMode(v1.PersistentVolumeBlock), accessModes(v1.ReadWriteMany)), newClass(),
				newCreated()),
			want: &v1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{Name: pvName, Annotations: noDeletionSecret},
				Spec: v1.PersistentVolumeSpec{
					AccessModes:                   modes(v1.ReadWriteMany),
					Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
					PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
					VolumeMode:                    ptr.To(v1.PersistentVolumeBlock),
					PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{
						Driver: driver, VolumeHandle: "vol-1", VolumeAttributes: map[string]string{"pool": "gold", IdentityKey: testIdentity},
					}},
				},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := buildVolume(tt.in)
			if !apiequality.Semantic.DeepEqual(got, tt.want) {
				t.Errorf("buildVolume() differs from the expected PV (-want +got):\n%s", diff.Diff(tt.want, got))
			}
		})
	}
}

// testIdentity is the provisioner identity of the tests.
const testIdentity = "1700000000000-42-" + driver

func TestVolumeAttributes(t *testing.T) {
	tests := []struct {
		name    string
		context map[string]string
		want    map[string]string
	}{
		{name: "a volume without context carries the provisioner identity alone", want: map[string]string{IdentityKey: testIdentity}},
		{name: "the driver's volume context is added to the identity",
			context: map[string]string{"pool": "gold"}, want: map[string]string{IdentityKey: testIdentity, "pool": "gold"}},
		{name: "the driver's context wins over the identity, as upstream",
			context: map[string]string{IdentityKey: "driver's"}, want: map[string]string{IdentityKey: "driver's"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := volumeAttributes(testIdentity, tt.context); !maps.Equal(got, tt.want) {
				t.Errorf("volumeAttributes() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIdentity(t *testing.T) {
	start := time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC) // 1700000000000 ms
	if got := Identity(start, 42, driver); got != testIdentity {
		t.Errorf("Identity() = %q, want upstream's <ms since the epoch>-<random>-<driver> %q", got, testIdentity)
	}
}

func TestBuildVolumeCapacity(t *testing.T) {
	tests := []struct {
		name    string
		claim   *v1.PersistentVolumeClaim
		created *csi.Volume
		want    string
	}{
		{name: "the capacity is what the driver created", claim: newClaim(requesting("1Gi")),
			created: newCreated(withCapacity(3 << 30)), want: "3Gi"},
		{name: "a driver that reports no capacity gets the requested size", claim: newClaim(requesting("5Gi")),
			created: newCreated(withCapacity(0)), want: "5Gi"},
		{name: "a decimal request is kept to the byte", claim: newClaim(requesting("5G")),
			created: newCreated(withCapacity(0)), want: "5G"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pv := buildVolume(volumeFor(tt.claim, newClass(), tt.created))
			got, want := pv.Spec.Capacity[v1.ResourceStorage], resource.MustParse(tt.want)
			if got.Cmp(want) != 0 {
				t.Errorf("capacity = %s, want %s", got.String(), want.String())
			}
		})
	}
}

func TestBuildVolumeReclaimPolicy(t *testing.T) {
	tests := []struct {
		name  string
		class *storagev1.StorageClass
		want  v1.PersistentVolumeReclaimPolicy
	}{
		{name: "a class without policy deletes the volume", class: newClass(), want: v1.PersistentVolumeReclaimDelete},
		{name: "a class that retains retains the volume", class: newClass(reclaiming(v1.PersistentVolumeReclaimRetain)),
			want: v1.PersistentVolumeReclaimRetain},
		{name: "a class that deletes deletes the volume", class: newClass(reclaiming(v1.PersistentVolumeReclaimDelete)),
			want: v1.PersistentVolumeReclaimDelete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := buildVolume(volumeFor(newClaim(), tt.class, newCreated())).Spec.PersistentVolumeReclaimPolicy; got != tt.want {
				t.Errorf("reclaim policy = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBuildVolumeFSTypeAndReadOnly(t *testing.T) {
	tests := []struct {
		name         string
		claim        *v1.PersistentVolumeClaim
		publishRO    bool
		wantFSType   string
		wantReadOnly bool
	}{
		{name: "a claim without volume mode gets the fsType", claim: newClaim(), wantFSType: "ext4"},
		{name: "a filesystem claim gets the fsType", claim: newClaim(volumeMode(v1.PersistentVolumeFilesystem)),
			wantFSType: "ext4"},
		{name: "a block claim gets no fsType", claim: newClaim(volumeMode(v1.PersistentVolumeBlock))},
		{name: "a ReadOnlyMany claim is read-only with --controller-publish-readonly",
			claim: newClaim(accessModes(v1.ReadOnlyMany)), publishRO: true, wantFSType: "ext4", wantReadOnly: true},
		{name: "a ReadOnlyMany claim is writable without --controller-publish-readonly",
			claim: newClaim(accessModes(v1.ReadOnlyMany)), wantFSType: "ext4"},
		{name: "a ReadWriteOnce claim is writable with --controller-publish-readonly",
			claim: newClaim(accessModes(v1.ReadWriteOnce)), publishRO: true, wantFSType: "ext4"},
		{name: "ReadOnlyMany with another mode is writable with --controller-publish-readonly",
			claim: newClaim(accessModes(v1.ReadOnlyMany, v1.ReadWriteMany)), publishRO: true, wantFSType: "ext4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := volumeFor(tt.claim, newClass(), newCreated())
			in.opts.ControllerPublishReadOnly = tt.publishRO
			source := buildVolume(in).Spec.CSI
			if source.FSType != tt.wantFSType {
				t.Errorf("FSType = %q, want %q", source.FSType, tt.wantFSType)
			}
			if source.ReadOnly != tt.wantReadOnly {
				t.Errorf("ReadOnly = %v, want %v", source.ReadOnly, tt.wantReadOnly)
			}
		})
	}
}

func TestBuildVolumeSecrets(t *testing.T) {
	ref := func(name string) *v1.SecretReference { return &v1.SecretReference{Name: name, Namespace: "secrets"} }
	all := classparams.SecretRefs{classparams.ProvisionerSecret: ref("prov"), classparams.ControllerPublishSecret: ref("cp"), classparams.NodeStageSecret: ref("ns"),
		classparams.NodePublishSecret: ref("np"), classparams.ControllerExpandSecret: ref("ce"), classparams.NodeExpandSecret: ref("ne"),
		classparams.ControllerModifySecret: ref("cm")}
	tests := []struct {
		name            string
		secrets         classparams.SecretRefs
		wantSource      v1.CSIPersistentVolumeSource
		wantAnnotations map[string]string
	}{
		{name: "a volume without secrets refers to none; its deletion secret annotations are empty, as upstream",
			wantAnnotations: noDeletionSecret},
		{name: "every secret but the provisioner's and the controller-modify one is referred to by the PV",
			secrets: all,
			wantSource: v1.CSIPersistentVolumeSource{ControllerPublishSecretRef: ref("cp"), NodeStageSecretRef: ref("ns"),
				NodePublishSecretRef: ref("np"), ControllerExpandSecretRef: ref("ce"), NodeExpandSecretRef: ref("ne")},
			wantAnnotations: map[string]string{
				"volume.kubernetes.io/provisioner-deletion-secret-name":      "prov",
				"volume.kubernetes.io/provisioner-deletion-secret-namespace": "secrets",
				"volume.kubernetes.io/controller-modify-secret-name":         "cm",
				"volume.kubernetes.io/controller-modify-secret-namespace":    "secrets",
			}},
		{name: "the provisioner secret alone is kept for deletion in annotations",
			secrets: classparams.SecretRefs{classparams.ProvisionerSecret: ref("prov")},
			wantAnnotations: map[string]string{
				"volume.kubernetes.io/provisioner-deletion-secret-name":      "prov",
				"volume.kubernetes.io/provisioner-deletion-secret-namespace": "secrets",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := volumeFor(newClaim(), newClass(), newCreated())
			in.secrets = tt.secrets
			pv := buildVolume(in)
			got := *pv.Spec.CSI
			got.Driver, got.VolumeHandle, got.VolumeAttributes, got.FSType = "", "", nil, ""
			if !apiequality.Semantic.DeepEqual(got, tt.wantSource) {
				t.Errorf("secret references differ (-want +got):\n%s", diff.Diff(tt.wantSource, got))
			}
			if !apiequality.Semantic.DeepEqual(pv.Annotations, tt.wantAnnotations) {
				t.Errorf("annotations = %v, want %v", pv.Annotations, tt.wantAnnotations)
			}
		})
	}
}

// noDeletionSecret are the annotations of a PV without provisioner secret.
var noDeletionSecret = map[string]string{
	"volume.kubernetes.io/provisioner-deletion-secret-name":      "",
	"volume.kubernetes.io/provisioner-deletion-secret-namespace": "",
}

func TestBuildVolumeNodeAffinity(t *testing.T) {
	in := func(key, value string) v1.NodeSelectorRequirement {
		return v1.NodeSelectorRequirement{Key: key, Operator: v1.NodeSelectorOpIn, Values: []string{value}}
	}
	tests := []struct {
		name             string
		created          *csi.Volume
		notTopologyAware bool
		want             *v1.VolumeNodeAffinity
	}{
		{name: "a volume without accessible topology has no node affinity", created: newCreated()},
		{name: "the accessible topology of a driver without VOLUME_ACCESSIBILITY_CONSTRAINTS is ignored, as upstream",
			created: newCreated(accessibleIn(map[string]string{"zone": "a"})), notTopologyAware: true},
		{name: "a volume accessible in one zone is pinned to that zone",
			created: newCreated(accessibleIn(map[string]string{"zone": "a"})),
			want: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
				{MatchExpressions: []v1.NodeSelectorRequirement{in("zone", "a")}},
			}}}},
		{name: "each accessible segment is one term of sorted keys",
			created: newCreated(accessibleIn(map[string]string{"zone": "a", "rack": "1"}, map[string]string{"zone": "b"})),
			want: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
				{MatchExpressions: []v1.NodeSelectorRequirement{in("rack", "1"), in("zone", "a")}},
				{MatchExpressions: []v1.NodeSelectorRequirement{in("zone", "b")}},
			}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := volumeFor(newClaim(), newClass(), tt.created)
			in.topology = !tt.notTopologyAware
			got := buildVolume(in).Spec.NodeAffinity
			if !apiequality.Semantic.DeepEqual(got, tt.want) {
				t.Errorf("node affinity differs (-want +got):\n%s", diff.Diff(tt.want, got))
			}
		})
	}
}

func TestResolveSecrets(t *testing.T) {
	// Every secret of the class is named after something else of the claim,
	// so a secret resolved into the wrong field shows.
	allSecrets := newClass(
		param(classparams.ProvisionerSecret.NameKey, "prov-${pvc.name}"),
		param(classparams.ProvisionerSecret.NamespaceKey, "${pvc.namespace}"),
		param(classparams.ControllerPublishSecret.NameKey, "cp-${pv.name}"),
		param(classparams.ControllerPublishSecret.NamespaceKey, "kube-system"),
		param(classparams.NodeStageSecret.NameKey, "ns-${pvc.annotations['team']}"),
		param(classparams.NodeStageSecret.NamespaceKey, "${pvc.namespace}"),
		param(classparams.NodePublishSecret.NameKey, "np-${pvc.name}"),
		param(classparams.NodePublishSecret.NamespaceKey, "${pvc.namespace}"),
		param(classparams.ControllerExpandSecret.NameKey, "ce-${pvc.annotations['team']}"),
		param(classparams.ControllerExpandSecret.NamespaceKey, "kube-system"),
		param(classparams.NodeExpandSecret.NameKey, "ne-${pv.name}"),
		param(classparams.NodeExpandSecret.NamespaceKey, "${pvc.namespace}"),
	)
	ref := func(ns, name string) *v1.SecretReference { return &v1.SecretReference{Namespace: ns, Name: name} }
	tests := []struct {
		name    string
		class   *storagev1.StorageClass
		want    classparams.SecretRefs
		wantErr bool
	}{
		{name: "a class without secrets resolves none", class: newClass(param("type", "ssd"))},
		{name: "all six secrets are resolved from the claim",
			class: allSecrets,
			want: classparams.SecretRefs{
				classparams.ProvisionerSecret:       ref("test", "prov-data"),
				classparams.ControllerPublishSecret: ref("kube-system", "cp-"+pvName),
				classparams.NodeStageSecret:         ref("test", "ns-blue"),
				classparams.NodePublishSecret:       ref("test", "np-data"),
				classparams.ControllerExpandSecret:  ref("kube-system", "ce-blue"),
				classparams.NodeExpandSecret:        ref("test", "ne-"+pvName),
			}},
		{name: "only the secrets the class sets are resolved",
			class: newClass(param(classparams.NodePublishSecret.NameKey, "np"), param(classparams.NodePublishSecret.NamespaceKey, "ns")),
			want:  classparams.SecretRefs{classparams.NodePublishSecret: ref("ns", "np")}},
		{name: "a secret with a name but no namespace is an error",
			class: newClass(param(classparams.NodeExpandSecret.NameKey, "ne")), wantErr: true},
		{name: "the provisioner secret may use the claim's annotations, as upstream",
			class: newClass(param(classparams.ProvisionerSecret.NameKey, "${pvc.annotations['team']}"),
				param(classparams.ProvisionerSecret.NamespaceKey, "test")),
			want: classparams.SecretRefs{classparams.ProvisionerSecret: ref("test", "blue")}},
		{name: "the default secret stands in for every kind the class does not name",
			class: newClass(param(classparams.DefaultSecret.NameKey, "d"), param(classparams.DefaultSecret.NamespaceKey, "ns"),
				param(classparams.NodeStageSecret.NameKey, "stage"), param(classparams.NodeStageSecret.NamespaceKey, "ns")),
			want: classparams.SecretRefs{
				classparams.ProvisionerSecret: ref("ns", "d"), classparams.ControllerPublishSecret: ref("ns", "d"),
				classparams.NodeStageSecret: ref("ns", "stage"), classparams.NodePublishSecret: ref("ns", "d"),
				classparams.ControllerExpandSecret: ref("ns", "d"), classparams.NodeExpandSecret: ref("ns", "d"),
				classparams.ControllerModifySecret: ref("ns", "d"),
			}},
		{name: "a template token that does not exist is an error",
			class: newClass(param(classparams.ProvisionerSecret.NameKey, "${pvc.label}"),
				param(classparams.ProvisionerSecret.NamespaceKey, "test")),
			wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveSecrets(tt.class.Parameters, pvName, newClaim(annotated("team", "blue")))
			if (err != nil) != tt.wantErr {
				t.Fatalf("resolveSecrets() error = %v, wantErr %v", err, tt.wantErr)
			}
			if !maps.Equal(printable(got), printable(tt.want)) {
				t.Errorf("resolveSecrets() = %v, want %v", printable(got), printable(tt.want))
			}
		})
	}
}

// printable lists secret references as namespace/name by name parameter,
// for failure messages.
func printable(r classparams.SecretRefs) map[string]string {
	out := map[string]string{}
	for s, ref := range r {
		out[s.NameKey] = ref.Namespace + "/" + ref.Name
	}
	return out
}
