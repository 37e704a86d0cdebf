package cachetrim

import (
	"reflect"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const driver = "ours.csi.example.com"

var (
	now        = metav1.Now()
	managed    = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	finalizers = []string{"kubernetes.io/pvc-protection"}
)

// fullMeta is metadata with everything a trim may drop.
func fullMeta(annotations map[string]string) metav1.ObjectMeta {
	a := map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}", "team": "a"}
	for k, v := range annotations {
		a[k] = v
	}
	return metav1.ObjectMeta{
		Name: "c", Namespace: "ns", UID: "uid-1", ResourceVersion: "7", Generation: 3, CreationTimestamp: now,
		DeletionTimestamp: &now, Finalizers: finalizers, Labels: map[string]string{"app": "db"}, Annotations: a,
		ManagedFields: managed, OwnerReferences: []metav1.OwnerReference{{Name: "owner"}},
	}
}

// identityOf is what every trimmed object keeps of fullMeta.
func identityOf(annotations map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: "c", Namespace: "ns", UID: "uid-1", ResourceVersion: "7", CreationTimestamp: now,
		DeletionTimestamp: &now, Finalizers: finalizers, Annotations: annotations,
	}
}

// untouched is fullMeta after Meta: only managed fields are gone; every
// annotation, kubectl's last-applied one included, stays, because the
// controller library updates claims and volumes from the cache.
func untouched(annotations map[string]string) metav1.ObjectMeta {
	m := fullMeta(annotations)
	m.ManagedFields = nil
	return m
}

func fullClaim(annotations map[string]string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: fullMeta(annotations),
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, VolumeName: "pv-1",
			StorageClassName: ptr.To("fast"), VolumeMode: ptr.To(v1.PersistentVolumeBlock),
			Resources:     v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			DataSourceRef: &v1.TypedObjectReference{APIGroup: ptr.To("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot", Name: "s", Namespace: ptr.To("src")},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound, Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
	}
}

func TestCoreClaims(t *testing.T) {
	// The data source stays: another sidecar's finalizer on it is released
	// only when no pending claim of any provisioner uses the source.
	trimmedSpec := v1.PersistentVolumeClaimSpec{VolumeName: "pv-1", StorageClassName: ptr.To("fast"), VolumeMode: ptr.To(v1.PersistentVolumeBlock),
		DataSourceRef: &v1.TypedObjectReference{APIGroup: ptr.To("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot", Name: "s", Namespace: ptr.To("src")}}
	other := map[string]string{annStorageProvisioner: "other.example.com"}
	otherBeta := map[string]string{annBetaStorageProvisioner: "other.example.com"}
	tests := []struct {
		name        string
		annotations map[string]string
		trimmed     bool
		keptAnn     map[string]string
	}{
		{name: "no provisioner chosen yet: kept whole", annotations: nil},
		{name: "ours: kept whole", annotations: map[string]string{annStorageProvisioner: driver}},
		{name: "ours by the beta annotation: kept whole", annotations: map[string]string{annBetaStorageProvisioner: driver}},
		{name: "another provisioner's: trimmed", annotations: other, trimmed: true, keptAnn: other},
		{name: "another provisioner's by the beta annotation: trimmed", annotations: otherBeta, trimmed: true, keptAnn: otherBeta},
		{name: "an in-tree plugin's, migrated to us (CSI migration): kept whole",
			annotations: map[string]string{annStorageProvisioner: "kubernetes.io/aws-ebs", annMigratedTo: driver}},
		{name: "an in-tree plugin's, migrated to another driver: trimmed",
			annotations: map[string]string{annStorageProvisioner: "kubernetes.io/aws-ebs", annMigratedTo: "other.example.com"}, trimmed: true,
			keptAnn: map[string]string{annStorageProvisioner: "kubernetes.io/aws-ebs"}},
		{name: "the GA annotation decides over the beta one, as in the library",
			annotations: map[string]string{annStorageProvisioner: "other.example.com", annBetaStorageProvisioner: driver}, trimmed: true, keptAnn: other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Core(driver)(fullClaim(tt.annotations))
			if err != nil {
				t.Fatal(err)
			}
			want := fullClaim(tt.annotations)
			want.ObjectMeta = untouched(tt.annotations)
			if tt.trimmed {
				want = &v1.PersistentVolumeClaim{ObjectMeta: identityOf(tt.keptAnn), Spec: trimmedSpec,
					Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound}}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("trimmed claim (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCoreIsIdempotentAndSharesAnnotations(t *testing.T) {
	trim := Core(driver)
	other := map[string]string{annStorageProvisioner: "other.example.com"}
	a, _ := trim(fullClaim(other))
	b, _ := trim(fullClaim(other))
	again, _ := trim(a.(*v1.PersistentVolumeClaim).DeepCopy())
	if diff := cmp.Diff(a, again); diff != "" {
		t.Errorf("trimming a trimmed claim changed it (-first +second):\n%s", diff)
	}
	// Informers of one factory share the transform and run it concurrently:
	// the shared map must only be read (go test -race checks).
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { _, _ = trim(fullClaim(other)) })
	}
	wg.Wait()
	ma, mb := a.(*v1.PersistentVolumeClaim).Annotations, b.(*v1.PersistentVolumeClaim).Annotations
	if reflect.ValueOf(ma).Pointer() != reflect.ValueOf(mb).Pointer() {
		t.Error("trimmed claims of one provisioner do not share their annotation map")
	}
}

// TestSharedAnnotationsAreBounded: the provisioner annotation is written by
// claim authors, so ever-new values must not grow the sidecar's memory.
func TestSharedAnnotationsAreBounded(t *testing.T) {
	var s sharedAnnotations
	for i := range 10 * maxSharedAnnotations {
		value := "provisioner-" + strconv.Itoa(i)
		if m := s.get(annStorageProvisioner, value); m[annStorageProvisioner] != value {
			t.Fatalf("get(%q) = %v", value, m)
		}
	}
	if len(s.maps) > maxSharedAnnotations {
		t.Errorf("%d annotation maps retained for %d distinct values, want at most %d",
			len(s.maps), 10*maxSharedAnnotations, maxSharedAnnotations)
	}
	first, again := s.get(annStorageProvisioner, "provisioner-0"), s.get(annStorageProvisioner, "provisioner-0")
	if reflect.ValueOf(first).Pointer() != reflect.ValueOf(again).Pointer() {
		t.Error("the first provisioners seen no longer share their map")
	}
}

func fullVolume(annotations map[string]string, csiDriver string) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{
		ObjectMeta: fullMeta(annotations),
		Spec: v1.PersistentVolumeSpec{
			Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			ClaimRef: &v1.ObjectReference{Namespace: "ns", Name: "c"}, PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			StorageClassName: "fast", MountOptions: []string{"ro"},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeReleased, Message: "released"},
	}
	if csiDriver != "" {
		pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: csiDriver, VolumeHandle: "h", VolumeAttributes: map[string]string{"k": "v"}}
	}
	return pv
}

func TestCoreVolumes(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		csiDriver   string
		trimmed     bool
		keptAnn     map[string]string
	}{
		{name: "provisioned by us: kept whole", annotations: map[string]string{annProvisionedBy: driver}, csiDriver: driver},
		{name: "of our CSI driver, made by hand: kept whole (a clone source)", csiDriver: driver},
		{name: "of our CSI driver, provisioned by another name: kept whole", annotations: map[string]string{annProvisionedBy: "x"}, csiDriver: driver},
		{name: "migrated to us: kept whole", annotations: map[string]string{annProvisionedBy: "kubernetes.io/x", annMigratedTo: driver}},
		{name: "another provisioner's: trimmed", annotations: map[string]string{annProvisionedBy: "other"}, csiDriver: "other",
			trimmed: true, keptAnn: map[string]string{annProvisionedBy: "other"}},
		{name: "another driver's, made by hand: trimmed", csiDriver: "other", trimmed: true},
		{name: "not CSI at all: trimmed", trimmed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Core(driver)(fullVolume(tt.annotations, tt.csiDriver))
			if err != nil {
				t.Fatal(err)
			}
			want := fullVolume(tt.annotations, tt.csiDriver)
			want.ObjectMeta = untouched(tt.annotations)
			if tt.trimmed {
				want = &v1.PersistentVolume{ObjectMeta: identityOf(tt.keptAnn),
					Spec: v1.PersistentVolumeSpec{ClaimRef: &v1.ObjectReference{Namespace: "ns", Name: "c"},
						PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete, StorageClassName: "fast"},
					Status: v1.PersistentVolumeStatus{Phase: v1.VolumeReleased}}
				if tt.csiDriver != "" {
					want.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: tt.csiDriver}
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("trimmed volume (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCoreOtherObjectsLoseOnlyManagedFields(t *testing.T) {
	class := &storagev1.StorageClass{ObjectMeta: fullMeta(nil), Provisioner: driver}
	got, _ := Core(driver)(class)
	want := &storagev1.StorageClass{ObjectMeta: untouched(nil), Provisioner: driver}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("StorageClass (-want +got):\n%s", diff)
	}
}

func TestSnapshot(t *testing.T) {
	full := func() *snapv1.VolumeSnapshot {
		return &snapv1.VolumeSnapshot{
			TypeMeta:   metav1.TypeMeta{APIVersion: "snapshot.storage.k8s.io/v1", Kind: "VolumeSnapshot"},
			ObjectMeta: fullMeta(nil),
			Spec:       snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr.To("c")}, VolumeSnapshotClassName: ptr.To("k")},
			Status: &snapv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: ptr.To("content"), CreationTime: &now, ReadyToUse: ptr.To(true),
				RestoreSize: ptr.To(resource.MustParse("1Gi")), Error: &snapv1.VolumeSnapshotError{Message: ptr.To("old error")}},
		}
	}
	want := &snapv1.VolumeSnapshot{ObjectMeta: identityOf(nil), Status: &snapv1.VolumeSnapshotStatus{
		BoundVolumeSnapshotContentName: ptr.To("content"), ReadyToUse: ptr.To(true), RestoreSize: ptr.To(resource.MustParse("1Gi"))}}
	got, _ := Snapshot(full())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	noStatus := full()
	noStatus.Status = nil
	got, _ = Snapshot(noStatus)
	if s := got.(*snapv1.VolumeSnapshot).Status; s != nil {
		t.Errorf("a snapshot without status got one: %+v", s)
	}
}

func TestContent(t *testing.T) {
	allow := map[string]string{"snapshot.storage.kubernetes.io/allow-volume-mode-change": "true"}
	full := &snapv1.VolumeSnapshotContent{
		TypeMeta:   metav1.TypeMeta{Kind: "VolumeSnapshotContent"},
		ObjectMeta: fullMeta(allow),
		Spec: snapv1.VolumeSnapshotContentSpec{
			VolumeSnapshotRef: v1.ObjectReference{Namespace: "ns", Name: "s", UID: "u", Kind: "VolumeSnapshot", ResourceVersion: "3"},
			Driver:            driver, DeletionPolicy: snapv1.VolumeSnapshotContentDelete, SourceVolumeMode: ptr.To(v1.PersistentVolumeBlock),
			Source: snapv1.VolumeSnapshotContentSource{SnapshotHandle: ptr.To("h")},
		},
		Status: &snapv1.VolumeSnapshotContentStatus{SnapshotHandle: ptr.To("h"), RestoreSize: ptr.To(int64(5)), ReadyToUse: ptr.To(true)},
	}
	want := &snapv1.VolumeSnapshotContent{
		ObjectMeta: identityOf(allow),
		Spec: snapv1.VolumeSnapshotContentSpec{VolumeSnapshotRef: v1.ObjectReference{Namespace: "ns", Name: "s", UID: "u"},
			Driver: driver, SourceVolumeMode: ptr.To(v1.PersistentVolumeBlock)},
		Status: &snapv1.VolumeSnapshotContentStatus{SnapshotHandle: ptr.To("h"), RestoreSize: ptr.To(int64(5))},
	}
	got, _ := Content(full)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
}
