package sourceuse

import (
	"slices"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/linkcache/linkcachetest"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	"github.com/xns-csi/csi-provisioner/internal/shared/sourceuse/sourceusetest"
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

// inProd moves the claim to prod, naming the snapshot in its own namespace
// as upstream's provisioner does: spec.dataSource, no namespace.
func inProd(c *v1.PersistentVolumeClaim) {
	c.Namespace, c.Spec.DataSourceRef.Namespace = "prod", nil
	c.Spec.DataSource = &v1.TypedLocalObjectReference{APIGroup: c.Spec.DataSourceRef.APIGroup, Kind: datasource.SnapshotKind, Name: "snap"}
}

// handedTo sets the provisioner the PV controller handed the claim to.
func handedTo(provisioner string) claimOption {
	return func(c *v1.PersistentVolumeClaim) {
		c.Annotations = map[string]string{claimsource.AnnStorageProvisioner: provisioner}
	}
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
		Finalizers: []string{datasource.SnapshotFinalizer, datasource.LinkSnapshotFinalizer, datasource.CrossNamespaceSnapshotFinalizer}}}
	direct := datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "prod", Name: "snap"}
	linked, explicit := direct, direct
	linked.ThroughLink, explicit.ExplicitNamespace = true, true
	for name, tc := range map[string]struct {
		claims  []*v1.PersistentVolumeClaim
		volumes []string
		src     datasource.Source
		want    []string
	}{
		"a pending claim naming the snapshot uses it": {claims: []*v1.PersistentVolumeClaim{claim("a")}, src: direct, want: []string{"a"}},
		"a claim naming the namespace holds the finalizer of such restores": {claims: []*v1.PersistentVolumeClaim{claim("a"), claim("local", inProd)},
			src: explicit, want: []string{"a"}},
		"every claim naming the snapshot holds upstream's shared finalizer, with or without the namespace": {
			claims: []*v1.PersistentVolumeClaim{claim("a"), claim("local", inProd), claim("l", throughLink)}, src: direct, want: []string{"a", "local"}},
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
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("pending %v, want %v", got, tc.want)
			}
		})
	}
}

// grantsAre answers every grant check with one reason.
type grantsAre referencegrant.Reason

func (g grantsAre) Check(referencegrant.Reference) referencegrant.Decision {
	return referencegrant.Decision{Allowed: g == grantsAre(referencegrant.ReasonAllowed), Reason: referencegrant.Reason(g)}
}

// TestTheGateJudgesOnlyTheProvisionersOwnClaims: a sidecar with the
// cross-namespace gate off never provisions its own claims naming another
// namespace, so they hold nothing; another driver's claim is its sidecar's
// to decide, and holds the source as a claim of a sidecar with the gate on
// would: while its grant allows it, or cannot be read.
func TestTheGateJudgesOnlyTheProvisionersOwnClaims(t *testing.T) {
	snap := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "snap",
		Finalizers: []string{datasource.CrossNamespaceSnapshotFinalizer}}}
	explicit := datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: "prod", Name: "snap",
		ExplicitNamespace: true}
	for _, tt := range []struct {
		name        string
		provisioner string
		claim       *v1.PersistentVolumeClaim
		grants      grantsAre
		want        bool
	}{
		{"its own claim is never provisioned with the gate off", "a.example.com", claim("x", handedTo("a.example.com")),
			grantsAre(referencegrant.ReasonAllowed), false},
		{"another driver's granted claim holds the source", "a.example.com", claim("x", handedTo("b.example.com")),
			grantsAre(referencegrant.ReasonAllowed), true},
		{"a claim no provisioner was chosen for yet is judged as another's", "a.example.com", claim("x"),
			grantsAre(referencegrant.ReasonAllowed), true},
		{"another driver's claim without a grant holds nothing: an annotation cannot pin another namespace's snapshot",
			"a.example.com", claim("x", handedTo("b.example.com")), grantsAre(referencegrant.ReasonNotGranted), false},
		{"another driver's claim whose grant cannot be read holds the source", "a.example.com", claim("x", handedTo("b.example.com")),
			grantsAre(referencegrant.ReasonUnavailable), true},
		{"without a provisioner every claim is judged with the gate as set", "", claim("x", handedTo("b.example.com")),
			grantsAre(referencegrant.ReasonAllowed), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := finder(t, []*v1.PersistentVolumeClaim{tt.claim})
			f.Policy.CrossNamespace, f.Policy.Grants, f.Provisioner = false, tt.grants, tt.provisioner
			uses, err := f.Pending(explicit, snap)
			if err != nil {
				t.Fatal(err)
			}
			held := slices.ContainsFunc(uses, func(u Use) bool { return u.Verdict.HoldsSource() })
			if held != tt.want {
				t.Errorf("held = %v (uses %+v), want %v", held, uses, tt.want)
			}
		})
	}
}
