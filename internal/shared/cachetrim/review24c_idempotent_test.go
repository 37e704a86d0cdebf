package cachetrim

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// Review of issue 24, commit 98dedd9: with Config.Transform, a listed
// object is transformed once as it is decoded and again when the informer
// stores it. Each transform given to Config.Transform must then give the
// same object the second time, whatever a tenant put in it.

// r24cAnnotations are annotations a tenant may write: n in-use marks of
// value length valueLen, the overflow mark itself, and others.
func r24cAnnotations(n, valueLen int, overflow string) map[string]string {
	a := map[string]string{"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("{", 1000), "other": "x"}
	for i := range n {
		a[fmt.Sprintf("%s%d", datasource.InUseAnnotationPrefix, i)] = strings.Repeat("t", valueLen)
	}
	if overflow != "" {
		a[inUseOverflow] = overflow
	}
	for _, k := range datasource.AllowVolumeModeChangeAnnotations {
		a[k] = "true"
	}
	return a
}

func r24cMetas() map[string]metav1.ObjectMeta {
	out := map[string]metav1.ObjectMeta{}
	for _, n := range []int{0, 1, maxInUseMarks, maxInUseMarks + 1, 100} {
		for _, l := range []int{0, maxInUseValue, maxInUseValue + 1} {
			for _, o := range []string{"", "short", strings.Repeat("o", maxInUseValue+1)} {
				out[fmt.Sprintf("marks=%d len=%d overflow=%d", n, l, len(o))] = metav1.ObjectMeta{
					Name: "s", Namespace: "ns", UID: "u", ResourceVersion: "7", Generation: 3,
					Labels: map[string]string{"l": "v"}, Annotations: r24cAnnotations(n, l, o),
					Finalizers: []string{"f"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}},
					OwnerReferences: []metav1.OwnerReference{{Name: "o"}}, DeletionTimestamp: ptr.To(metav1.Now()),
				}
			}
		}
	}
	return out
}

func r24cTwice(t *testing.T, name string, f cache.TransformFunc, obj runtime.Object) {
	t.Helper()
	once, err := f(obj.DeepCopyObject())
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	twice, err := f(once.(runtime.Object).DeepCopyObject())
	if err != nil {
		t.Fatalf("%s, twice: %v", name, err)
	}
	if !reflect.DeepEqual(once, twice) {
		t.Errorf("%s: transformed twice\n%+v\nonce\n%+v", name, twice, once)
	}
}

func TestReview24cTransformsAreIdempotent(t *testing.T) {
	size := resource.MustParse("1Gi")
	for name, m := range r24cMetas() {
		snap := &snapv1.VolumeSnapshot{TypeMeta: metav1.TypeMeta{Kind: "VolumeSnapshot", APIVersion: "snapshot.storage.k8s.io/v1"}, ObjectMeta: m,
			Spec: snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{VolumeSnapshotContentName: ptr.To("c")}},
			Status: &snapv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: ptr.To("c"), ReadyToUse: ptr.To(true), RestoreSize: &size,
				Error: &snapv1.VolumeSnapshotError{Message: ptr.To("e")}}}
		content := &snapv1.VolumeSnapshotContent{ObjectMeta: m, Spec: snapv1.VolumeSnapshotContentSpec{
			VolumeSnapshotRef: v1.ObjectReference{Namespace: "ns", Name: "s", UID: "u", Kind: "VolumeSnapshot", ResourceVersion: "1"},
			Driver:            "d", SourceVolumeMode: ptr.To(v1.PersistentVolumeBlock), DeletionPolicy: snapv1.VolumeSnapshotContentDelete},
			Status: &snapv1.VolumeSnapshotContentStatus{SnapshotHandle: ptr.To("h"), RestoreSize: ptr.To[int64](1 << 62)}}
		attachment := &v1.PersistentVolumeClaim{ObjectMeta: m}
		r24cTwice(t, "Snapshot "+name, Snapshot, snap)
		r24cTwice(t, "Snapshot, no status "+name, Snapshot, &snapv1.VolumeSnapshot{ObjectMeta: m})
		r24cTwice(t, "Content "+name, Content, content)
		r24cTwice(t, "Content, no status "+name, Content, &snapv1.VolumeSnapshotContent{ObjectMeta: m})
		r24cTwice(t, "Meta "+name, Meta, attachment)
		r24cTwice(t, "Meta of a snapshot "+name, Meta, snap)
	}
}
