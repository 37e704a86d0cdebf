package sourceuse

import (
	"slices"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/pkg/claimsource"
	"github.com/xns-csi/csi-provisioner/pkg/datasource"
	"github.com/xns-csi/csi-provisioner/pkg/linkcache/linkcachetest"
	"github.com/xns-csi/csi-provisioner/pkg/referencegrant"
	"github.com/xns-csi/csi-provisioner/pkg/sourceuse/sourceusetest"
)

// allGranted allows every reference.
type allGranted struct{}

func (allGranted) Check(referencegrant.Reference) referencegrant.Decision {
	return referencegrant.Decision{Allowed: true, Reason: referencegrant.ReasonAllowed}
}

type claimOption func(*v1.PersistentVolumeClaim)

// claim is a pending claim test/name restoring prod/snap (directly, or
// through the link test/to-snap with throughLink).
func claim(name string, opts ...claimOption) *v1.PersistentVolumeClaim {
	group, prod := datasource.SnapshotGroup, "prod"
	c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "test", Name: name, UID: types.UID(name)},
		Spec: v1.PersistentVolumeClaimSpec{DataSourceRef: &v1.TypedObjectReference{APIGroup: &group, Kind: datasource.SnapshotKind, Name: "snap", Namespace: &prod}}}
	for _, o := range opts {
		o(c)
	}
	return c
}

func throughLink(c *v1.PersistentVolumeClaim) {
	c.Spec.DataSourceRef.Kind, c.Spec.DataSourceRef.Name, c.Spec.DataSourceRef.Namespace = datasource.LinkKind, "to-snap", nil
}

func deleted(c *v1.PersistentVolumeClaim) { c.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)} }

func unresolvable(c *v1.PersistentVolumeClaim) { c.Spec.DataSourceRef.APIGroup = nil }

func finder(t *testing.T, claims []*v1.PersistentVolumeClaim, volumes ...string) Finder {
	t.Helper()
	claimIndex, pvs := sourceusetest.Caches(t, claims, volumes...)
	links := linkcachetest.Links{linkcachetest.Link("test", "to-snap", "prod", "snap")}
	return Finder{Claims: claimIndex, Links: links, Volumes: pvs,
		VolumeName: func(c *v1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) },
		Policy:     claimsource.Policy{CrossNamespace: true, Grants: allGranted{}, SnapshotLinks: true, Links: links}}
}

func TestPending(t *testing.T) {
	snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "snap",
		Finalizers: []string{datasource.SnapshotFinalizer, datasource.LinkSnapshotFinalizer}}}
	direct := datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "prod", Name: "snap"}
	linked := direct
	linked.ThroughLink = true
	for name, tc := range map[string]struct {
		claims  []*v1.PersistentVolumeClaim
		volumes []string
		src     datasource.Source
		want    []string
	}{
		"a pending claim naming the snapshot uses it": {claims: []*v1.PersistentVolumeClaim{claim("a")}, src: direct, want: []string{"a"}},
		"a claim through a link uses it through the link only": {claims: []*v1.PersistentVolumeClaim{claim("a"), claim("l", throughLink)},
			src: linked, want: []string{"l"}},
		"a claim whose PV exists is done":                     {claims: []*v1.PersistentVolumeClaim{claim("a")}, volumes: []string{"pvc-a"}, src: direct},
		"a deleted claim is done":                             {claims: []*v1.PersistentVolumeClaim{claim("a", deleted)}, src: direct},
		"a claim whose source cannot be resolved is left out": {claims: []*v1.PersistentVolumeClaim{claim("a", unresolvable)}, src: direct},
	} {
		t.Run(name, func(t *testing.T) {
			uses, err := finder(t, tc.claims, tc.volumes...).Pending(tc.src, snap)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, u := range uses {
				if u.Verdict.Action != claimsource.Provision {
					t.Errorf("%s: verdict %+v, want Provision", u.Claim.Name, u.Verdict)
				}
				got = append(got, u.Claim.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("pending %v, want %v", got, tc.want)
			}
		})
	}
}
