package cachetrim

import (
	"fmt"
	"strings"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// annotationBytes is what a map of annotations holds in keys and values.
func annotationBytes(annotations map[string]string) int {
	n := 0
	for k, v := range annotations {
		n += len(k) + len(v)
	}
	return n
}

// TestATenantCannotGrowTheTrimmedSourcesAtWill (adversarial review of
// 7f55db4 as re-applied by 11a03d4): the snapshot cache holds every
// VolumeSnapshot of the cluster, of any driver, trimmed to a few hundred
// bytes (73dfbf5 measured 654 B per restored snapshot), and the claims of
// other provisioners are trimmed alike. The trims now keep every annotation
// with datasource.InUseAnnotationPrefix, whatever its size, and any tenant
// may write those on the snapshots (and claims) of their namespace: up to
// the API server's 256 KiB of annotations per object, kept in every
// sidecar's memory. A sidecar's own mark is a key of 63 characters at most
// with an RFC 3339 time; the trims keep nothing bigger than the marks
// sidecars write (a few marks of ~100 B each).
func TestATenantCannotGrowTheTrimmedSourcesAtWill(t *testing.T) {
	junk := map[string]string{}
	for i := range 4 {
		junk[fmt.Sprintf("%sh-%d", datasource.InUseAnnotationPrefix, i)] = strings.Repeat("x", 60<<10)
	}
	const bound = 4 << 10 // far more than any number of real marks on one source
	snap, _ := Snapshot(&snapv1.VolumeSnapshot{ObjectMeta: fullMeta(junk)})
	if n := annotationBytes(snap.(*snapv1.VolumeSnapshot).Annotations); n > bound {
		t.Errorf("a trimmed snapshot of any driver keeps %d bytes of a tenant's annotations (bound %d)", n, bound)
	}
	withProvisioner := map[string]string{annStorageProvisioner: "other.example.com"}
	for k, v := range junk {
		withProvisioner[k] = v
	}
	claim, _ := Core(driver)(fullClaim(withProvisioner))
	if n := annotationBytes(claim.(*v1.PersistentVolumeClaim).Annotations); n > bound {
		t.Errorf("a trimmed claim of another provisioner keeps %d bytes of a tenant's annotations (bound %d)", n, bound)
	}
}
