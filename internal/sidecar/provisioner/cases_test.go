package provisioner

import (
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apitypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	csiclient "github.com/xns-csi/csi-provisioner/internal/sidecar/csi"
)

// The objects of the cases: the class "fast", the claims test/data (and
// others built with newClaim), the snapshot snap with its content in
// "prod" or "test", and a grant in "prod" for claims in "test".

func ours(opts ...claimOption) *v1.PersistentVolumeClaim {
	claim := newClaim(append([]claimOption{annotated(annStorageProvisioner, driver),
		func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("fast") }}, opts...)...)
	return claim
}

// restoring makes the claim restore the snapshot namespace/name, naming the
// namespace in dataSourceRef when it is not the claim's.
func restoring(namespace, name string) claimOption {
	return func(c *v1.PersistentVolumeClaim) {
		ref := &v1.TypedObjectReference{APIGroup: ptr.To(datasource.SnapshotGroup), Kind: datasource.SnapshotKind, Name: name}
		if namespace != c.Namespace {
			ref.Namespace = ptr.To(namespace)
		}
		c.Spec.DataSourceRef = ref
	}
}

func cloning(namespace, name string) claimOption {
	return func(c *v1.PersistentVolumeClaim) {
		ref := &v1.TypedObjectReference{Kind: datasource.ClaimKind, Name: name}
		if namespace != c.Namespace {
			ref.Namespace = ptr.To(namespace)
		}
		c.Spec.DataSourceRef = ref
	}
}

func populatedBy(group, kind string) claimOption {
	return func(c *v1.PersistentVolumeClaim) {
		c.Spec.DataSourceRef = &v1.TypedObjectReference{APIGroup: ptr.To(group), Kind: kind, Name: "backup"}
	}
}

func named(name, uid string) claimOption {
	return func(c *v1.PersistentVolumeClaim) { c.Name, c.UID = name, apitypes.UID(uid) }
}

// snapshot returns a ready snapshot namespace/snap bound to its content
// "content-<namespace>", taken by driver, with handle "handle-<namespace>".
func snapshot(namespace string, opts ...func(*snapv1.VolumeSnapshot)) (*snapv1.VolumeSnapshot, *snapv1.VolumeSnapshotContent) {
	contentName := "content-" + namespace
	snap := &snapv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: namespace, UID: "snap-uid", ResourceVersion: "1"},
		Status: &snapv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: ptr.To(contentName), ReadyToUse: ptr.To(true),
			RestoreSize: ptr.To(resource.MustParse("1Gi"))},
	}
	content := &snapv1.VolumeSnapshotContent{
		ObjectMeta: metav1.ObjectMeta{Name: contentName},
		Spec:       snapv1.VolumeSnapshotContentSpec{VolumeSnapshotRef: v1.ObjectReference{Name: "snap", Namespace: namespace, UID: "snap-uid"}, Driver: driver},
		Status:     &snapv1.VolumeSnapshotContentStatus{SnapshotHandle: ptr.To("handle-" + namespace), ReadyToUse: ptr.To(true)},
	}
	for _, o := range opts {
		o(snap)
	}
	return snap, content
}

func notReady(s *snapv1.VolumeSnapshot) { s.Status.ReadyToUse = ptr.To(false) }

// protected is a snapshot protected for the restores naming its namespace,
// as every restore of prod/snap here does.
func protected(s *snapv1.VolumeSnapshot) {
	s.Finalizers = []string{datasource.CrossNamespaceSnapshotFinalizer}
}

// grant is the ReferenceGrant prod/bar: claims in "test" may use the
// snapshot prod/snap.
func grant() *gatewayv1.ReferenceGrant {
	return &gatewayv1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Name: "bar", Namespace: "prod"},
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: "", Kind: "PersistentVolumeClaim", Namespace: "test"}},
			To:   []gatewayv1.ReferenceGrantTo{{Group: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Name: ptr.To(gatewayv1.ObjectName("snap"))}},
		},
	}
}

// boundClaim is the claim test/src bound to the PV pv-src of driver.
func boundClaim() (*v1.PersistentVolumeClaim, *v1.PersistentVolume) {
	src := ours(named("src", "src"), func(c *v1.PersistentVolumeClaim) {
		c.ResourceVersion, c.Spec.VolumeName, c.Status.Phase = "1", "pv-src", v1.ClaimBound
	})
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-src"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: "vol-src"}},
			ClaimRef:               &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: src.Namespace, Name: src.Name, UID: src.UID},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound},
	}
	return src, pv
}

func objects(objs ...runtime.Object) []runtime.Object {
	return append([]runtime.Object{newClass()}, objs...)
}

var (
	created  = answer{}
	timedOut = answer{err: status.Error(codes.DeadlineExceeded, "timed out")}
	invalid  = answer{err: status.Error(codes.InvalidArgument, "bad parameters")}
	deleted  = answer{}
)

// The transcript lines of the claim test/data (UID claimUID).
const (
	create              = "CreateVolume " + pvName
	createFromProd      = create + " from snapshot handle-prod"
	provisioned         = "provision test/data: Finished, PV " + pvName + " of id-" + pvName
	protectProdSnapshot = "patch volumesnapshots prod/snap: add /metadata/finalizers [" + datasource.CrossNamespaceSnapshotFinalizer + "]"
)

func TestProvisioning(t *testing.T) {
	prodSnap, prodContent := snapshot("prod")
	protectedSnap, _ := snapshot("prod", protected)
	unready, _ := snapshot("prod", notReady)
	src, srcPV := boundClaim()
	noRestore := csiclient.Capabilities{ControllerService: true, CreateDeleteVolume: true}
	runFramework(t, []frameworkCase{
		{
			name:    "an empty volume is created, nothing else is written",
			objects: objects(ours()),
			steps:   []step{provision("test/data", created)},
			want:    []string{create, provisioned},
		},
		{
			name:    "a final CreateVolume error ends the attempt",
			objects: objects(ours()),
			steps:   []step{provision("test/data", invalid), provision("test/data", created)},
			want: []string{create + " → InvalidArgument", "provision test/data: Finished, CSI InvalidArgument",
				create, provisioned},
		},
		{
			name:    "a snapshot in another namespace is protected, then restored, when a grant allows it",
			objects: objects(ours(restoring("prod", "snap")), prodSnap, prodContent, grant()),
			steps:   []step{provision("test/data", created)},
			want:    []string{protectProdSnapshot, createFromProd, provisioned},
		},
		{
			name:    "a snapshot that already carries the finalizer is not written to",
			objects: objects(ours(restoring("prod", "snap")), protectedSnap, prodContent, grant()),
			steps:   []step{provision("test/data", created)},
			want:    []string{createFromProd, provisioned},
		},
		{
			name:    "without a grant nothing is written or called, until the grant arrives",
			objects: objects(ours(restoring("prod", "snap")), prodSnap, prodContent),
			steps:   []step{provision("test/data"), update(grant()), provision("test/data", created)},
			want: []string{"provision test/data: NoChange, refused ReferenceGrantMissing",
				"> grant prod/bar created", protectProdSnapshot, createFromProd, provisioned},
		},
		{
			name:    "with the gate off a claim naming another namespace is left alone, told once",
			gateOff: true,
			objects: objects(ours(restoring("prod", "snap")), prodSnap, prodContent, grant()),
			steps:   []step{provision("test/data"), provision("test/data")},
			want: []string{"event Warning CrossNamespaceSourceDisabled spec.dataSourceRef.namespace names VolumeSnapshot prod/snap, but the provisioner's CrossNamespaceSourceProvisioning feature gate is off; the claim is not provisioned",
				"provision test/data: left alone", "provision test/data: left alone"},
		},
		{
			name:    "a populator's kind is left to the populator",
			objects: objects(ours(populatedBy("backup.example.com", "Backup"))),
			steps:   []step{provision("test/data")},
			want: []string{"event Normal WaitingForPopulator the data source Backup.backup.example.com test/backup is not a VolumeSnapshot or PersistentVolumeClaim; waiting for its volume populator to fill the volume",
				"provision test/data: left alone"},
		},
		{
			name:    "a snapshot that is not ready is waited for without writing",
			objects: objects(ours(restoring("prod", "snap")), unready, prodContent, grant()),
			steps:   []step{provision("test/data"), update(prodSnap), provision("test/data", created)},
			want: []string{"provision test/data: NoChange, refused SnapshotNotReady",
				"> volumesnapshots prod/snap updated", protectProdSnapshot, createFromProd, provisioned},
		},
		{
			// Every attempt costs two events; a claim re-queued by changes
			// that do not change its refusal is decided again, but not
			// attempted (see refusals).
			name:    "a refusal is announced once until the decision changes",
			objects: objects(ours(restoring("prod", "snap")), unready, prodContent),
			steps: []step{
				provision("test/data"), provision("test/data"),
				update(grant()), provision("test/data"), provision("test/data"),
				update(prodSnap), provision("test/data", created),
			},
			want: []string{"provision test/data: NoChange, refused ReferenceGrantMissing", "provision test/data: left alone",
				"> grant prod/bar created", "provision test/data: NoChange, refused SnapshotNotReady", "provision test/data: left alone",
				"> volumesnapshots prod/snap updated", protectProdSnapshot, createFromProd, provisioned},
		},
		{
			// A grant created and deleted over and over flips the refusal
			// of a claim whose snapshot is not ready. The first change is told
			// at once, the next 10 s after it (the claim is re-queued for
			// then), the newest refusal winning; a claim that can be
			// provisioned is attempted at once.
			name:    "a flapping refusal is told paced, and provisioning is not",
			objects: objects(ours(restoring("prod", "snap")), unready, prodContent),
			steps: []step{
				provision("test/data"),
				update(grant()), provision("test/data"),
				remove(grant()), provision("test/data"),
				wait(10 * time.Second), provision("test/data"),
				update(grant()), provision("test/data"),
				update(prodSnap), provision("test/data", created),
			},
			want: []string{"provision test/data: NoChange, refused ReferenceGrantMissing",
				"> grant prod/bar created", "provision test/data: NoChange, refused SnapshotNotReady",
				"> grant prod/bar deleted", "requeue test/data after 10s", "provision test/data: left alone",
				"provision test/data: NoChange, refused ReferenceGrantMissing",
				"> grant prod/bar created", "requeue test/data after 20s", "provision test/data: left alone",
				"> volumesnapshots prod/snap updated", protectProdSnapshot, createFromProd, provisioned},
		},
		{
			name:    "a driver that cannot restore is not asked to",
			caps:    &noRestore,
			objects: objects(ours(restoring("prod", "snap")), prodSnap, prodContent, grant()),
			steps:   []step{provision("test/data")},
			want:    []string{"provision test/data: NoChange, refused SnapshotRestoreUnsupported"},
		},
		{
			// KEP-3294: an attempt past its checks finishes. The grant is
			// deleted from the cache while CreateVolume runs; the retry sends
			// the same request and does not look at the grant again.
			name:    "a grant revoked while CreateVolume runs lets the attempt finish",
			objects: objects(ours(restoring("prod", "snap")), prodSnap, prodContent, grant()),
			steps: []step{
				provision("test/data", answer{err: timedOut.err, during: while(remove(grant()))}),
				provision("test/data", created),
				// Re-queued before the PV cache shows the PV: the
				// same PV, neither checked again nor sent again.
				provision("test/data"),
			},
			want: []string{protectProdSnapshot, createFromProd + " → DeadlineExceeded", "> grant prod/bar deleted",
				"provision test/data: Background, CSI DeadlineExceeded",
				createFromProd, provisioned, provisioned},
		},
		{
			name:    "a claim deleted while its CreateVolume is unanswered gets its volume deleted",
			objects: objects(ours(restoring("prod", "snap")), prodSnap, prodContent, grant()),
			steps: []step{
				provision("test/data", timedOut),
				remove(ours()),
				provisionDeleted(ours(restoring("prod", "snap")), created, deleted),
			},
			want: []string{protectProdSnapshot, createFromProd + " → DeadlineExceeded", "provision test/data: Background, CSI DeadlineExceeded",
				"> persistentvolumeclaims test/data deleted",
				createFromProd, "DeleteVolume id-" + pvName, "provision test/data: Finished, ignored: claim was deleted"},
		},
		{
			name:    "a volume the driver made without the snapshot's data is deleted again",
			objects: objects(ours(restoring("prod", "snap")), prodSnap, prodContent, grant()),
			steps:   []step{provision("test/data", answer{ignoreSource: true}, deleted)},
			want: []string{protectProdSnapshot, createFromProd, "DeleteVolume id-" + pvName,
				"provision test/data: Finished, error: the CSI driver created the volume without the requested data source; it was deleted again"},
		},
		{
			name:    "a volume smaller than requested is deleted again",
			objects: objects(ours()),
			steps:   []step{provision("test/data", answer{capacity: 1 << 20}, deleted)},
			want: []string{create, "DeleteVolume id-" + pvName,
				"provision test/data: Finished, error: the CSI driver created a volume of 1048576 bytes, less than the 1073741824 requested; it was deleted again"},
		},
		{
			name:    "a clone protects its source claim",
			objects: objects(ours(cloning("test", "src")), src, srcPV),
			steps:   []step{provision("test/data", created)},
			want: []string{"patch persistentvolumeclaims test/src: add /metadata/finalizers [" + datasource.CloneFinalizer + "]",
				create + " from volume vol-src", provisioned},
		},
		{
			name:    "a released volume is deleted in the driver",
			objects: objects(provisionedVolume()),
			steps:   []step{deleteVolume(pvName, deleted)},
			want:    []string{"DeleteVolume id-" + pvName, "delete " + pvName + ": done"},
		},
	})
}

// provisionDeleted runs Provision for a claim no longer in the caches, as
// the controller library does with the claim it last saw.
func provisionDeleted(claim *v1.PersistentVolumeClaim, answers ...answer) step {
	return step{answers: answers, run: func(w *world) string { return w.provision(claim) }}
}

func provisionedVolume() *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: v1.PersistentVolumeSpec{
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: "id-" + pvName}},
		},
	}
}
