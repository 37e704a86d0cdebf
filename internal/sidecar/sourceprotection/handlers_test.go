package sourceprotection

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// TestCrossNamespaceClonesRecheckTheirSource: the events that can end a
// cross-namespace clone's use of its source (a grant change in the source's
// namespace, the clone's PV, the clone's deletion) re-check the source
// claim, for both finalizers such a clone holds.
func TestCrossNamespaceClonesRecheckTheirSource(t *testing.T) {
	clone := pendingClaim("test", "x", prodClaim)
	p := New(Config{Claims: claimIndexer(t, clone, pendingClaim("test", "y", prodSnap))})
	defer p.queue.ShutDown()
	both, source := directUses(prodClaim, prodSnap), directUses(prodClaim)
	cloneVolume := &v1.PersistentVolume{Spec: v1.PersistentVolumeSpec{ClaimRef: &v1.ObjectReference{Namespace: "test", Name: "x"}}}
	tests := []struct {
		name  string
		event func()
		want  []datasource.Source
	}{
		{"a grant change in the source's namespace", func() { p.GrantsChanged("prod") }, both},
		{"a grant change in the clone's namespace", func() { p.GrantsChanged("test") }, nil},
		{"the grant cache readable again", func() { p.GrantsChanged("") }, both},
		{"the clone's PV", func() { p.VolumeHandler().OnAdd(cloneVolume, false) }, source},
		{"the clone's deletion", func() { p.ClaimHandler().OnDelete(clone) }, source},
	}
	for _, tt := range tests {
		tt.event()
		got := queued(p)
		slices.SortFunc(got, bySpelling)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: queued %v, want %v", tt.name, got, tt.want)
		}
	}
}

// directUses are the uses of srcs named directly, with and without the
// namespace, in bySpelling's order.
func directUses(srcs ...datasource.Source) []datasource.Source {
	var uses []datasource.Source
	for _, src := range srcs {
		explicit := src
		explicit.ExplicitNamespace = true
		uses = append(uses, src, explicit)
	}
	slices.SortFunc(uses, bySpelling)
	return uses
}

func bySpelling(a, b datasource.Source) int {
	return strings.Compare(fmt.Sprintf("%+v", a), fmt.Sprintf("%+v", b))
}

// TestSnapshotHandlerQueuesEachFinalizerItFollows: a snapshot is checked
// for each protection finalizer it carries; the links' one only by a
// protector that follows links.
func TestSnapshotHandlerQueuesEachFinalizerItFollows(t *testing.T) {
	snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "snap",
		Finalizers: []string{datasource.SnapshotFinalizer, datasource.LinkSnapshotFinalizer, datasource.CrossNamespaceSnapshotFinalizer}}}
	explicit := prodSnap
	explicit.ExplicitNamespace = true
	for _, tt := range []struct {
		name  string
		links LinkIndex
		want  []datasource.Source
	}{
		{"following links", storyLinks, []datasource.Source{prodSnap, explicit, prodSnapViaLink}},
		{"not following links", nil, []datasource.Source{prodSnap, explicit}},
	} {
		p := New(Config{Links: tt.links})
		p.SnapshotHandler().OnAdd(snap, false)
		if got := queued(p); !slices.Equal(got, tt.want) {
			t.Errorf("%s: queued %v, want %v", tt.name, got, tt.want)
		}
		p.queue.ShutDown()
	}
}
