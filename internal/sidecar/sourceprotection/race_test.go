package sourceprotection

import (
	"context"
	"slices"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapfake "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/fake"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/inflight"
)

// gatedVolumes is a PV lister whose Get reports that it was entered and
// waits for proceed, then finds the PV: the claim is provisioned.
type gatedVolumes struct {
	corelisters.PersistentVolumeLister
	entered, proceed chan struct{}
}

func (g gatedVolumes) Get(name string) (*v1.PersistentVolume, error) {
	g.entered <- struct{}{}
	<-g.proceed
	return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
}

// TestProtectDuringAReleaseIsNotLost: a release has decided the snapshot is
// unused (its last claim is provisioned) and is about to remove the
// finalizer when a new claim's Protect runs. Protect must not conclude
// "already protected" from the finalizer the release is removing: once both
// are done, the finalizer is there.
func TestProtectDuringAReleaseIsNotLost(t *testing.T) {
	snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: "prod", ResourceVersion: "1",
		Finalizers: []string{datasource.SnapshotFinalizer}}}
	client := snapfake.NewSimpleClientset(snap)
	vols := gatedVolumes{entered: make(chan struct{}, 1), proceed: make(chan struct{})}
	p := New(Config{SnapshotClient: client, Snapshots: staleCache{snap}, Claims: claimIndexer(t, pendingClaim("prod", "old", prodSnap)),
		Volumes: vols, InFlight: inflight.New(), VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }})
	ctx := context.Background()

	released := make(chan error, 1)
	go func() { released <- p.release(ctx, prodSnap) }()
	await(t, vols.entered, "the release to look at the old claim's volume")

	protected := make(chan error, 1)
	go func() { protected <- p.Protect(ctx, prodSnap) }()
	var protectErr error
	// Without serialization Protect returns at once, having seen the
	// finalizer the release is about to remove; with it, it waits for the
	// release. The window only gives an unserialized Protect the time to
	// return first: a serialized one passes however long it is.
	select {
	case protectErr = <-protected:
		protected = nil
	case <-time.After(200 * time.Millisecond):
	}
	close(vols.proceed)
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	if protected != nil {
		protectErr = <-protected
	}
	if protectErr != nil {
		t.Fatal(protectErr)
	}
	if f := finalizers(t, client); !slices.Contains(f, datasource.SnapshotFinalizer) {
		t.Errorf("finalizers after a Protect that ran during a release = %v, want %s: CreateVolume would run unprotected",
			f, datasource.SnapshotFinalizer)
	}
}
