package sourceprotection

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/xns-csi/csi-provisioner/pkg/datasource"
)

// TestCrossNamespaceClonesRecheckTheirSource: the events that can end a
// cross-namespace clone's use of its source (a grant change in the source's
// namespace, the clone's PV, the clone's deletion) re-check the source claim.
func TestCrossNamespaceClonesRecheckTheirSource(t *testing.T) {
	clone := pendingClaim("test", "x", prodClaim)
	p := New(Config{Claims: claimIndexer(t, clone, pendingClaim("test", "y", prodSnap))})
	defer p.queue.ShutDown()
	both, source := []datasource.Source{prodClaim, prodSnap}, []datasource.Source{prodClaim}
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
		slices.SortFunc(got, func(a, b datasource.Source) int { return strings.Compare(a.String(), b.String()) })
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: queued %v, want %v", tt.name, got, tt.want)
		}
	}
}
