package cachetrim

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// TestSourcesKeepTheInUseAnnotations: source protection reads, on every
// snapshot and on claims of any provisioner (clone sources), the
// annotations with which sidecar processes say a CreateVolume of theirs may
// be reading the object; the trims keep those and nothing else.
func TestSourcesKeepTheInUseAnnotations(t *testing.T) {
	inUse := map[string]string{datasource.InUseAnnotationPrefix + "h-1": "2026-11-27T10:00:00Z"}
	snap, _ := Snapshot(&snapv1.VolumeSnapshot{ObjectMeta: fullMeta(inUse)})
	if diff := cmp.Diff(inUse, snap.(*snapv1.VolumeSnapshot).Annotations); diff != "" {
		t.Errorf("snapshot annotations (-want +got):\n%s", diff)
	}
	other := map[string]string{annStorageProvisioner: "other.example.com"}
	trim := Core(driver)
	plain, _ := trim(fullClaim(other))
	cloned, _ := trim(fullClaim(map[string]string{annStorageProvisioner: "other.example.com", datasource.InUseAnnotationPrefix + "h-1": "2026-11-27T10:00:00Z"}))
	want := map[string]string{annStorageProvisioner: "other.example.com", datasource.InUseAnnotationPrefix + "h-1": "2026-11-27T10:00:00Z"}
	if diff := cmp.Diff(want, cloned.(*v1.PersistentVolumeClaim).Annotations); diff != "" {
		t.Errorf("another provisioner's claim being cloned: annotations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(other, plain.(*v1.PersistentVolumeClaim).Annotations); diff != "" {
		t.Errorf("the annotation map the provisioner's other claims share (-want +got):\n%s", diff)
	}
}

// TestManyInUseMarksKeepOneThatHolds: more marks than a source can have
// from sidecars are kept as one mark whose time cannot be read, which
// holds the source as any such mark does: a tenant's marks cannot grow
// the cache, nor hide a real mark among them.
func TestManyInUseMarksKeepOneThatHolds(t *testing.T) {
	marks := map[string]string{}
	for i := range maxInUseMarks + 1 {
		marks[fmt.Sprintf("%sh-%d", datasource.InUseAnnotationPrefix, i)] = "2026-11-27T10:00:00Z"
	}
	snap, _ := Snapshot(&snapv1.VolumeSnapshot{ObjectMeta: fullMeta(marks)})
	got := snap.(*snapv1.VolumeSnapshot).Annotations
	if len(got) != 1 || got[inUseOverflow] == "" {
		t.Fatalf("annotations %v, want only %s", got, inUseOverflow)
	}
	if _, err := time.Parse(time.RFC3339, got[inUseOverflow]); err == nil {
		t.Errorf("the overflow mark %q reads as a time: it could expire", got[inUseOverflow])
	}
}
