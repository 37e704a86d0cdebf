package provisioner

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/sidecar/classparams"
)

// The claim test/data with claimUID, provisioned by driver through the
// class "fast" as the PV pvName.
const (
	driver   = "csi.example.com"
	claimUID = "9b1d3f0e-2c4a-4e8b-a1f2-0123456789ab"
	pvName   = "pvc-" + claimUID
)

// defaultOpts are the sidecar's flag defaults.
var defaultOpts = Options{VolumeNamePrefix: "pvc", VolumeNameUUIDLength: -1}

type claimOption func(*v1.PersistentVolumeClaim)

// newClaim returns a ReadWriteOnce claim test/data of 1Gi without volume
// mode; options change it.
func newClaim(opts ...claimOption) *v1.PersistentVolumeClaim {
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "test", UID: claimUID},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources: v1.VolumeResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			},
		},
	}
	for _, o := range opts {
		o(claim)
	}
	return claim
}

func withUID(uid string) claimOption {
	return func(c *v1.PersistentVolumeClaim) { c.UID = types.UID(uid) }
}

func inClaimNamespace(ns string) claimOption {
	return func(c *v1.PersistentVolumeClaim) { c.Namespace = ns }
}

func requesting(size string) claimOption {
	return func(c *v1.PersistentVolumeClaim) {
		c.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}
	}
}

func withoutRequest() claimOption {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.Resources.Requests = nil }
}

func limitedTo(size string) claimOption {
	return func(c *v1.PersistentVolumeClaim) {
		c.Spec.Resources.Limits = v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}
	}
}

func accessModes(modes ...v1.PersistentVolumeAccessMode) claimOption {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.AccessModes = modes }
}

func volumeMode(mode v1.PersistentVolumeMode) claimOption {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeMode = ptr.To(mode) }
}

func annotated(key, value string) claimOption {
	return func(c *v1.PersistentVolumeClaim) { metav1.SetMetaDataAnnotation(&c.ObjectMeta, key, value) }
}

type classOption func(*storagev1.StorageClass)

// newClass returns the StorageClass "fast" of driver without parameters.
func newClass(opts ...classOption) *storagev1.StorageClass {
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: driver}
	for _, o := range opts {
		o(class)
	}
	return class
}

func param(key, value string) classOption {
	return func(c *storagev1.StorageClass) {
		if c.Parameters == nil {
			c.Parameters = map[string]string{}
		}
		c.Parameters[key] = value
	}
}

func mountOptions(opts ...string) classOption {
	return func(c *storagev1.StorageClass) { c.MountOptions = opts }
}

func reclaiming(policy v1.PersistentVolumeReclaimPolicy) classOption {
	return func(c *storagev1.StorageClass) { c.ReclaimPolicy = ptr.To(policy) }
}

// requestFor is the input of buildRequest for a claim and class with the
// default options.
func requestFor(claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass) requestInput {
	return requestInput{opts: defaultOpts, claim: claim, class: class, pvName: pvName}
}

func TestVolumeName(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		claim *v1.PersistentVolumeClaim
		want  string
	}{
		{name: "by default the name is the prefix and the whole UID with its dashes, as upstream",
			opts: defaultOpts, claim: newClaim(), want: "pvc-9b1d3f0e-2c4a-4e8b-a1f2-0123456789ab"},
		{name: "any negative length keeps the whole UID",
			opts: Options{VolumeNamePrefix: "pvc", VolumeNameUUIDLength: -7}, claim: newClaim(),
			want: "pvc-9b1d3f0e-2c4a-4e8b-a1f2-0123456789ab"},
		{name: "the prefix is the one configured",
			opts: Options{VolumeNamePrefix: "team-a", VolumeNameUUIDLength: -1}, claim: newClaim(),
			want: "team-a-9b1d3f0e-2c4a-4e8b-a1f2-0123456789ab"},
		{name: "a length truncates the UID after its dashes are removed",
			opts: Options{VolumeNamePrefix: "pvc", VolumeNameUUIDLength: 10}, claim: newClaim(),
			want: "pvc-9b1d3f0e2c"},
		{name: "a length of exactly the UUID keeps the whole UID",
			opts: Options{VolumeNamePrefix: "pvc", VolumeNameUUIDLength: 32}, claim: newClaim(),
			want: "pvc-9b1d3f0e2c4a4e8ba1f20123456789ab"},
		{name: "a length longer than the UID keeps the whole UID",
			opts: Options{VolumeNamePrefix: "pvc", VolumeNameUUIDLength: 100}, claim: newClaim(),
			want: "pvc-9b1d3f0e2c4a4e8ba1f20123456789ab"},
		{name: "another claim gets another name",
			opts: defaultOpts, claim: newClaim(withUID("00000000-1111-2222-3333-444444444444")),
			want: "pvc-00000000-1111-2222-3333-444444444444"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := VolumeName(tt.opts, tt.claim); got != tt.want {
				t.Errorf("VolumeName() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBuildRequestNameIsTheVolumeName(t *testing.T) {
	in := requestFor(newClaim(), newClass())
	in.opts.VolumeNameUUIDLength = 8
	req, err := buildRequest(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := "pvc-9b1d3f0e"; req.GetName() != want {
		t.Errorf("Name = %q, want %q", req.GetName(), want)
	}
}

func TestBuildRequestCapacity(t *testing.T) {
	tests := []struct {
		name    string
		claim   *v1.PersistentVolumeClaim
		want    *csi.CapacityRange
		wantErr string
	}{
		{name: "the storage request is the required size, without limit",
			claim: newClaim(requesting("1Gi")), want: &csi.CapacityRange{RequiredBytes: 1 << 30}},
		{name: "a decimal request is converted to bytes",
			claim: newClaim(requesting("5G")), want: &csi.CapacityRange{RequiredBytes: 5_000_000_000}},
		{name: "the storage limit is the limit size",
			claim: newClaim(requesting("1Gi"), limitedTo("2Gi")),
			want:  &csi.CapacityRange{RequiredBytes: 1 << 30, LimitBytes: 2 << 30}},
		{name: "a limit equal to the request is allowed",
			claim: newClaim(requesting("1Gi"), limitedTo("1Gi")),
			want:  &csi.CapacityRange{RequiredBytes: 1 << 30, LimitBytes: 1 << 30}},
		{name: "a limit below the request is an error",
			claim: newClaim(requesting("2Gi"), limitedTo("1Gi")), wantErr: "below its request"},
		{name: "a claim without storage request asks for any size",
			claim: newClaim(withoutRequest()), want: &csi.CapacityRange{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := buildRequest(requestFor(tt.claim, newClass()))
			if !errorContains(err, tt.wantErr) {
				t.Fatalf("buildRequest() error = %v, want one containing %q", err, tt.wantErr)
			}
			if !proto.Equal(req.GetCapacityRange(), tt.want) {
				t.Errorf("CapacityRange = %s, want %s", text(req.GetCapacityRange()), text(tt.want))
			}
		})
	}
}

func TestBuildRequestAccessMode(t *testing.T) {
	const (
		rwo  = v1.ReadWriteOnce
		rox  = v1.ReadOnlyMany
		rwx  = v1.ReadWriteMany
		rwop = v1.ReadWriteOncePod
	)
	type csiMode = csi.VolumeCapability_AccessMode_Mode
	tests := []struct {
		name        string
		modes       []v1.PersistentVolumeAccessMode
		multiWriter bool
		want        []csiMode // one capability each, as upstream
	}{
		{name: "ReadWriteOnce is a single-node writer", modes: modes(rwo),
			want: []csiMode{csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}},
		{name: "ReadWriteOnce is a single-node multi-writer when the driver has that capability", modes: modes(rwo),
			multiWriter: true, want: []csiMode{csi.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER}},
		{name: "ReadOnlyMany is a multi-node reader", modes: modes(rox),
			want: []csiMode{csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY}},
		{name: "ReadOnlyMany stays a multi-node reader with the multi-writer capability", modes: modes(rox),
			multiWriter: true, want: []csiMode{csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY}},
		{name: "ReadWriteMany is a multi-node multi-writer", modes: modes(rwx),
			want: []csiMode{csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER}},
		{name: "ReadWriteOncePod is a single-node single-writer when the driver has the multi-writer capability",
			modes: modes(rwop), multiWriter: true, want: []csiMode{csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER}},
		{name: "ReadWriteOncePod falls back to a single-node writer without that capability", modes: modes(rwop),
			want: []csiMode{csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}},
		// Upstream's "provision with access mode multi node multi readonly".
		{name: "ReadOnlyMany and ReadWriteOnce are two capabilities, in the claim's order", modes: modes(rox, rwo),
			want: []csiMode{csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY, csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}},
		{name: "ReadWriteOnce and ReadWriteMany are two capabilities", modes: modes(rwo, rwx),
			want: []csiMode{csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER, csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER}},
		{name: "a claim without access modes asks for no capability, as upstream", modes: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := requestFor(newClaim(accessModes(tt.modes...)), newClass())
			in.multiWriter = tt.multiWriter
			req, err := buildRequest(in)
			if err != nil {
				t.Fatal(err)
			}
			var got []csiMode
			for _, c := range req.GetVolumeCapabilities() {
				got = append(got, c.GetAccessMode().GetMode())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("access modes = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBuildRequestAccessType(t *testing.T) {
	mount := func(fsType string, flags ...string) *csi.VolumeCapability {
		return &csi.VolumeCapability{
			AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: fsType, MountFlags: flags}},
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
		}
	}
	block := &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
	// Which fsType (class or --default-fstype) is classparams.FSType's
	// decision; the request carries the one it made.
	tests := []struct {
		name   string
		claim  *v1.PersistentVolumeClaim
		class  *storagev1.StorageClass
		fsType string
		want   *csi.VolumeCapability
	}{
		{name: "a claim without volume mode is mounted with the fsType",
			claim: newClaim(), class: newClass(), fsType: "ext4", want: mount("ext4")},
		{name: "a filesystem claim is mounted with the fsType",
			claim: newClaim(volumeMode(v1.PersistentVolumeFilesystem)), class: newClass(), fsType: "ext4",
			want: mount("ext4")},
		{name: "without an fsType the driver chooses",
			claim: newClaim(), class: newClass(), want: mount("")},
		{name: "the class's mount options are the mount flags",
			claim: newClaim(), class: newClass(mountOptions("noatime", "discard")),
			want: mount("", "noatime", "discard")},
		{name: "a block claim gets a block volume, without fsType or mount options",
			claim: newClaim(volumeMode(v1.PersistentVolumeBlock)),
			class: newClass(param(classparams.FSTypeKey, "xfs"), mountOptions("noatime")), fsType: "xfs",
			want: block},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := requestFor(tt.claim, tt.class)
			in.fsType = tt.fsType
			req, err := buildRequest(in)
			if err != nil {
				t.Fatal(err)
			}
			caps := req.GetVolumeCapabilities()
			if len(caps) != 1 || !proto.Equal(caps[0], tt.want) {
				t.Errorf("VolumeCapabilities = %v, want [%s]", caps, text(tt.want))
			}
			if got, want := requestedFSType(req), tt.want.GetMount().GetFsType(); got != want {
				t.Errorf("requestedFSType() = %q, want %q", got, want)
			}
		})
	}
}

func TestBuildRequestParameters(t *testing.T) {
	secretParams := []classOption{
		param(classparams.ProvisionerSecret.NameKey, "creds"),
		param(classparams.ProvisionerSecret.NamespaceKey, "kube-system"),
		param(classparams.NodeStageSecret.NameKey, "stage"),
		param(classparams.NodeStageSecret.NamespaceKey, "kube-system"),
	}
	tests := []struct {
		name          string
		class         *storagev1.StorageClass
		extraMetadata bool
		want          map[string]string
		wantErr       string
	}{
		{name: "a class without parameters passes none", class: newClass(), want: map[string]string{}},
		{name: "the driver's own parameters are passed as they are",
			class: newClass(param("type", "ssd"), param("replicas", "3")),
			want:  map[string]string{"type": "ssd", "replicas": "3"}},
		{name: "the provisioner's reserved parameters are not passed",
			class: newClass(append(secretParams, param("type", "ssd"), param(classparams.FSTypeKey, "xfs"))...),
			want:  map[string]string{"type": "ssd"}},
		{name: "the deprecated fsType and secret parameters are passed on, as upstream",
			class: newClass(param("fsType", "xfs"), param("csiProvisionerSecretName", "creds"), param("csiProvisionerSecretNamespace", "ns")),
			want:  map[string]string{"fsType": "xfs", "csiProvisionerSecretName": "creds", "csiProvisionerSecretNamespace": "ns"}},
		{name: "an unknown reserved parameter is an error",
			class:   newClass(param("type", "ssd"), param("csi.storage.k8s.io/fs-type", "xfs")),
			wantErr: "csi.storage.k8s.io/fs-type"},
		{name: "--extra-create-metadata adds the claim's and the PV's names",
			class: newClass(param("type", "ssd")), extraMetadata: true,
			want: map[string]string{"type": "ssd",
				"csi.storage.k8s.io/pvc/name": "data", "csi.storage.k8s.io/pvc/namespace": "test",
				"csi.storage.k8s.io/pv/name": pvName}},
		{name: "--extra-create-metadata still drops the reserved parameters",
			class: newClass(secretParams...), extraMetadata: true,
			want: map[string]string{
				"csi.storage.k8s.io/pvc/name": "data", "csi.storage.k8s.io/pvc/namespace": "test",
				"csi.storage.k8s.io/pv/name": pvName}},
		{name: "a class cannot set the extra metadata itself",
			class: newClass(param("csi.storage.k8s.io/pvc/name", "forged")), extraMetadata: true,
			wantErr: "csi.storage.k8s.io/pvc/name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := requestFor(newClaim(), tt.class)
			in.opts.ExtraCreateMetadata = tt.extraMetadata
			req, err := buildRequest(in)
			if !errorContains(err, tt.wantErr) {
				t.Fatalf("buildRequest() error = %v, want one containing %q", err, tt.wantErr)
			}
			if got := req.GetParameters(); !maps.Equal(got, tt.want) {
				t.Errorf("Parameters = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBuildRequestPassesThrough(t *testing.T) {
	snapshot := &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{
		Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: "snap-1"}}}
	topo := &csi.TopologyRequirement{
		Requisite: []*csi.Topology{{Segments: map[string]string{"zone": "a"}}},
		Preferred: []*csi.Topology{{Segments: map[string]string{"zone": "a"}}},
	}
	secrets := map[string]string{"password": "s3cret"}
	tests := []struct {
		name          string
		contentSource *csi.VolumeContentSource
		topology      *csi.TopologyRequirement
		secrets       map[string]string
		mutable       map[string]string
	}{
		{name: "an empty volume without topology or secrets asks for none"},
		{name: "the content source, topology, secrets and mutable parameters are passed to the driver",
			contentSource: snapshot, topology: topo, secrets: secrets, mutable: map[string]string{"iops": "3000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := requestFor(newClaim(), newClass())
			in.contentSource, in.topology, in.secrets, in.mutableParameters = tt.contentSource, tt.topology, tt.secrets, tt.mutable
			req, err := buildRequest(in)
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(req.GetVolumeContentSource(), tt.contentSource) {
				t.Errorf("VolumeContentSource = %s, want %s", text(req.GetVolumeContentSource()), text(tt.contentSource))
			}
			if !proto.Equal(req.GetAccessibilityRequirements(), tt.topology) {
				t.Errorf("AccessibilityRequirements = %s, want %s", text(req.GetAccessibilityRequirements()), text(tt.topology))
			}
			if !maps.Equal(req.GetSecrets(), tt.secrets) {
				t.Errorf("Secrets = %v, want %v", req.GetSecrets(), tt.secrets)
			}
			if !maps.Equal(req.GetMutableParameters(), tt.mutable) {
				t.Errorf("MutableParameters = %v, want %v", req.GetMutableParameters(), tt.mutable)
			}
		})
	}
}

// modes is shorthand for a list of access modes.
func modes(m ...v1.PersistentVolumeAccessMode) []v1.PersistentVolumeAccessMode { return m }

// errorContains reports whether err is nil when want is "", or else
// mentions want.
func errorContains(err error, want string) bool {
	if want == "" {
		return err == nil
	}
	return err != nil && strings.Contains(err.Error(), want)
}

// text prints a CSI message for failure messages.
func text(m proto.Message) string {
	if m == nil {
		return "<nil>"
	}
	return prototext.Format(m)
}
