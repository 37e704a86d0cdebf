package sourceprotection

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/linkcache/linkcachetest"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/inflight"
)

// links is a LinkIndex over a fixed set of VolumeSnapshotLinks.
type links = linkcachetest.Links

var link = linkcachetest.Link

func linkSource(namespace, name string) datasource.Source {
	return datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.LinkKind, Namespace: namespace, Name: name}
}

// Story 1's links: test/foo-link names prod/snap across namespaces,
// prod/local names it in its own namespace, test/other names another
// snapshot.
var storyLinks = links{link("test", "foo-link", "prod", "snap"), link("prod", "local", "", "snap"), link("test", "other", "prod", "other")}

// prodSnapViaLink is prod/snap used through links.
var prodSnapViaLink = datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "prod", Name: "snap", ThroughLink: true}

func TestInUseThroughLinks(t *testing.T) {
	tests := []struct {
		name    string
		claims  []*v1.PersistentVolumeClaim
		grants  grants
		flagOff bool
		want    bool
	}{
		{"a pending claim naming the snapshot directly does not keep the links' finalizer",
			[]*v1.PersistentVolumeClaim{pendingClaim("prod", "a", prodSnap)}, grants(referencegrant.ReasonAllowed), false, false},
		{"a pending claim through a granted link keeps the snapshot",
			[]*v1.PersistentVolumeClaim{pendingClaim("test", "a", linkSource("test", "foo-link"))}, grants(referencegrant.ReasonAllowed), false, true},
		{"a pending claim through a link without a grant does not keep it",
			[]*v1.PersistentVolumeClaim{pendingClaim("test", "a", linkSource("test", "foo-link"))}, grants(referencegrant.ReasonNotGranted), false, false},
		{"a pending claim through a link whose grant cannot be read keeps it",
			[]*v1.PersistentVolumeClaim{pendingClaim("test", "a", linkSource("test", "foo-link"))}, grants(referencegrant.ReasonUnavailable), false, true},
		{"a link in the snapshot's own namespace needs no grant",
			[]*v1.PersistentVolumeClaim{pendingClaim("prod", "a", linkSource("prod", "local"))}, grants(referencegrant.ReasonNotGranted), false, true},
		{"a claim through a link to another snapshot does not keep it",
			[]*v1.PersistentVolumeClaim{pendingClaim("test", "a", linkSource("test", "other"))}, grants(referencegrant.ReasonAllowed), false, false},
		{"a claim naming a link that does not exist does not keep it",
			[]*v1.PersistentVolumeClaim{pendingClaim("test", "a", linkSource("test", "missing"))}, grants(referencegrant.ReasonAllowed), false, false},
		{"with --cross-namespace-snapshot off a link claim is a populator's and keeps nothing",
			[]*v1.PersistentVolumeClaim{pendingClaim("test", "a", linkSource("test", "foo-link"))}, grants(referencegrant.ReasonAllowed), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(Config{Claims: claimIndexer(t, tt.claims...), Volumes: noVolumes{}, InFlight: inflight.New(), Links: storyLinks,
				Policy:     claimsource.Policy{Grants: tt.grants, SnapshotLinks: !tt.flagOff, Links: storyLinks},
				VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }})
			if got := p.inUse(prodSnapViaLink, &metav1.ObjectMeta{Namespace: "prod", Name: "snap"}); got != tt.want {
				t.Errorf("inUse() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestLinkClaimsDoNotKeepTheDirectFinalizer: the finalizer of direct
// restores is held by direct restores only, so a provisioner that does not
// follow links, sharing it, counts exactly what holds it; and a protector
// that does not follow links never releases the links' finalizer.
func TestLinkClaimsDoNotKeepTheDirectFinalizer(t *testing.T) {
	obj := &metav1.ObjectMeta{Namespace: "prod", Name: "snap"}
	claims := claimIndexer(t, pendingClaim("test", "a", linkSource("test", "foo-link")))
	p := New(Config{Claims: claims, Volumes: noVolumes{}, InFlight: inflight.New(), Links: storyLinks,
		Policy:     claimsource.Policy{Grants: grants(referencegrant.ReasonAllowed), SnapshotLinks: true, Links: storyLinks},
		VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }})
	if p.inUse(prodSnap, obj) {
		t.Error("a claim restoring through a link holds the finalizer of direct restores")
	}
	if !p.inUse(prodSnapViaLink, obj) {
		t.Error("a claim restoring through a link does not hold the links' finalizer")
	}
	flagOff := New(Config{Claims: claims, Volumes: noVolumes{}, InFlight: inflight.New(),
		VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }})
	if !flagOff.inUse(prodSnapViaLink, obj) {
		t.Error("a protector that does not follow links would release the links' finalizer")
	}
}

// queued drains the protector's queue.
func queued(p *Protector) []datasource.Source {
	var out []datasource.Source
	for p.queue.Len() > 0 {
		src, _ := p.queue.Get()
		p.queue.Done(src)
		out = append(out, src)
	}
	return out
}

func TestLinkClaimsRecheckTheLinkedSnapshot(t *testing.T) {
	claim := pendingClaim("test", "a", linkSource("test", "foo-link"))
	p := New(Config{Claims: claimIndexer(t, claim), Links: storyLinks})
	defer p.queue.ShutDown()
	want := prodSnapViaLink

	p.ClaimHandler().OnDelete(claim)
	if got := queued(p); len(got) != 1 || got[0] != want {
		t.Errorf("deleting a link claim queued %v, want the linked snapshot %v", got, want)
	}
	p.GrantsChanged("prod")
	if got := queued(p); !slices.Contains(got, want) {
		t.Errorf("a grant change in prod queued %v, want the snapshot linked into prod", got)
	}
	p.GrantsChanged("test")
	if got := queued(p); len(got) != 0 {
		t.Errorf("a grant change in test queued %v, want nothing: no link names a snapshot there", got)
	}
	p.GrantsChanged("") // the grant cache became readable
	if got := queued(p); len(got) != 1 || got[0] != want {
		t.Errorf("grants readable again queued %v, want the snapshot of the waiting link claim", got)
	}
}
