package snapshotwebhook

import (
	"errors"
	"fmt"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/linkcache/linkcachetest"
	"github.com/xns-csi/csi-provisioner/internal/shared/stategauge/metricstest"
)

// cachedSnapshots is a snapshot cache holding the snapshots given, by
// namespace/name, with their finalizers; err makes it unreadable.
type cachedSnapshots struct {
	finalizers map[string][]string
	err        error
}

func (c cachedSnapshots) SnapshotMeta(namespace, name string) (*snapv1.VolumeSnapshot, bool, error) {
	if c.err != nil {
		return nil, false, c.err
	}
	f, ok := c.finalizers[namespace+"/"+name]
	if !ok {
		return nil, false, nil
	}
	return &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Finalizers: f}}, true, nil
}

// TestTheHeldGaugeCountsOnlySnapshotsWhoseRestoreBegan (issue 26's
// adversarial review): the gauge counts a snapshot only when it exists and
// carries the protection finalizer of a restore, exactly when the guard
// denies its deletion. A restore the sidecar still refuses (no finalizer)
// holds nothing, and a tenant's pending claims naming snapshots that exist
// nowhere count for nothing. (Before, every snapshot a pending claim named
// counted: 100 such claims showed 100 held snapshots, 30 days old.)
func TestTheHeldGaugeCountsOnlySnapshotsWhoseRestoreBegan(t *testing.T) {
	t.Run("a snapshot whose restore has not begun is not held", func(t *testing.T) {
		claim := createdAgo(time.Hour, restoring("prod", "restore", datasource.SnapshotKind, "snap"))
		g := guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{claim})
		g.Snapshots = cachedSnapshots{finalizers: map[string][]string{"ns/snap": nil}}
		unprotected := snapshot(fromClaim("data"))
		if v := (&Admitter{DeleteGuard: g}).Admit(request(t, admissionv1.Delete, snapshotsGVR, nil, unprotected)); !v.allowed() {
			t.Fatalf("the guard denies the deletion of an unprotected snapshot: %s", v.refusal)
		}
		metricstest.Expect(t, held(t, g), `snapshot_validation_webhook_guard_held_snapshots 0`)

		g.Snapshots = cachedSnapshots{finalizers: map[string][]string{"ns/snap": {datasource.CrossNamespaceSnapshotFinalizer}}}
		metricstest.Expect(t, held(t, g),
			`snapshot_validation_webhook_guard_held_snapshots 1`,
			`snapshot_validation_webhook_guard_held_snapshots_oldest_seconds 3600`)
	})
	t.Run("claims naming snapshots that exist nowhere hold nothing", func(t *testing.T) {
		var claims []*v1.PersistentVolumeClaim
		var links linkcachetest.Links
		for i := range 100 {
			links = append(links, linkcachetest.Link("tenant", fmt.Sprintf("link-%d", i), "", fmt.Sprintf("no-such-snapshot-%d", i)))
			c := restoring("tenant", fmt.Sprintf("ghost-%d", i), datasource.LinkKind, fmt.Sprintf("link-%d", i))
			claims = append(claims, createdAgo(30*24*time.Hour, c))
		}
		g := guardOf(t, notGranted, links, true, claims)
		g.Snapshots = cachedSnapshots{finalizers: map[string][]string{}}
		metricstest.Expect(t, held(t, g), `snapshot_validation_webhook_guard_held_snapshots 0`)
	})
	t.Run("an unreadable snapshot cache says nothing", func(t *testing.T) {
		claim := createdAgo(time.Hour, restoring("prod", "restore", datasource.SnapshotKind, "snap"))
		g := guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{claim})
		g.Snapshots = cachedSnapshots{err: errors.New("forbidden")}
		metricstest.Expect(t, held(t, g))
	})
}
