package sourceprotection

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapfake "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned/fake"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	"github.com/xns-csi/csi-provisioner/internal/sidecar/inflight"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// unreadableLinks is a link cache that cannot be read, as
// linkcache.Cache answers until it has synced, while its list is refused
// or when its CRD is not served.
type unreadableLinks struct{ err error }

func (u unreadableLinks) GetLink(string, string) (*snapv1alpha1.VolumeSnapshotLink, error) {
	return nil, u.err
}

func (u unreadableLinks) LinksTo(string, string) ([]*snapv1alpha1.VolumeSnapshotLink, error) {
	return nil, u.err
}

func (u unreadableLinks) LinksInto(string) ([]*snapv1alpha1.VolumeSnapshotLink, error) {
	return nil, u.err
}

// linksLostMidway finds the links to a snapshot, then cannot read a link
// by name: the cache stopped being readable between the two reads.
type linksLostMidway struct{ links }

func (linksLostMidway) GetLink(string, string) (*snapv1alpha1.VolumeSnapshotLink, error) {
	return nil, fmt.Errorf("VolumeSnapshotLink: %w", optionalapi.ErrForbidden)
}

// unreadableLinkCaches are the ways the link cache cannot tell which claims
// restore through links.
var unreadableLinkCaches = []struct {
	name  string
	links LinkIndex
}{
	{"not synced yet (a restart or a leader change)", unreadableLinks{fmt.Errorf("VolumeSnapshotLink: %w", optionalapi.ErrNotSynced)}},
	{"its list refused (RBAC)", unreadableLinks{fmt.Errorf("VolumeSnapshotLink: %w", optionalapi.ErrForbidden)}},
	{"its CRD no longer served", unreadableLinks{fmt.Errorf("VolumeSnapshotLink: %w", optionalapi.ErrNotServed)}},
	{"unreadable between finding a link and reading it", linksLostMidway{storyLinks}},
}

func linkProtector(t *testing.T, l LinkIndex, claims ...*v1.PersistentVolumeClaim) *Protector {
	return New(Config{Claims: claimIndexer(t, claims...), Volumes: noVolumes{}, InFlight: inflight.New(), Links: l,
		Policy:     claimsource.Policy{Grants: grants(referencegrant.ReasonAllowed), SnapshotLinks: true, Links: l},
		VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }})
}

func TestAnUnreadableLinkCacheCountsAsInUse(t *testing.T) {
	pending := pendingClaim("test", "a", linkSource("test", "foo-link"))
	for _, tt := range unreadableLinkCaches {
		t.Run(tt.name, func(t *testing.T) {
			if !linkProtector(t, tt.links, pending).inUse(prodSnapViaLink, beingDeleted(prodSnapViaLink)) {
				t.Error("inUse() = false: a snapshot whose deletion is requested would be released under a restore through a link")
			}
		})
	}
	// The direct finalizer does not depend on links.
	if linkProtector(t, unreadableLinks{errors.New("not synced")}).inUse(prodSnap, beingDeleted(prodSnap)) {
		t.Error("an unreadable link cache kept the finalizer of direct restores, which no link decides")
	}
}

// TestAnUnreadableLinkCacheReleasesNothing: the release of a snapshot
// whose deletion is requested writes nothing while the link cache cannot
// be read, even though no claim is found: "no link, so no claim" is what an
// unsynced cache says about every link.
func TestAnUnreadableLinkCacheReleasesNothing(t *testing.T) {
	snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: "prod", ResourceVersion: "1",
		DeletionTimestamp: &deletedAt, Finalizers: []string{datasource.LinkSnapshotFinalizer}}}
	for _, tt := range unreadableLinkCaches {
		t.Run(tt.name, func(t *testing.T) {
			client := snapfake.NewSimpleClientset(snap)
			p := linkProtector(t, tt.links, pendingClaim("test", "a", linkSource("test", "foo-link")))
			p.cfg.SnapshotClient, p.cfg.Snapshots = client, staleCache{snap}
			if err := p.release(context.Background(), prodSnapViaLink); err != nil {
				t.Fatal(err)
			}
			if f := finalizers(t, client); !slices.Contains(f, datasource.LinkSnapshotFinalizer) {
				t.Errorf("finalizers = %v: released while the link cache could not be read", f)
			}
		})
	}
	t.Run("a readable link cache without a claim through a link releases it", func(t *testing.T) {
		client := snapfake.NewSimpleClientset(snap)
		p := linkProtector(t, storyLinks)
		p.cfg.SnapshotClient, p.cfg.Snapshots = client, staleCache{snap}
		if err := p.release(context.Background(), prodSnapViaLink); err != nil {
			t.Fatal(err)
		}
		if f := finalizers(t, client); slices.Contains(f, datasource.LinkSnapshotFinalizer) {
			t.Errorf("finalizers = %v, want the links' released", f)
		}
	})
}
