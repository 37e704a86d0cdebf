package claimsource

import (
	"errors"
	"testing"
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// link is the VolumeSnapshotLink test/foo-link naming the snapshot "snap"
// in namespace (empty: the link's own).
func link(namespace string) *snapv1alpha1.VolumeSnapshotLink {
	return &snapv1alpha1.VolumeSnapshotLink{
		ObjectMeta: metav1.ObjectMeta{Name: "foo-link", Namespace: "test"},
		Spec:       snapv1alpha1.VolumeSnapshotLinkSpec{Source: snapv1alpha1.VolumeSnapshotLinkSource{Name: "snap", Namespace: namespace}},
	}
}

func linkSource(explicit bool) datasource.Source {
	return source(datasource.SnapshotGroup, datasource.LinkKind, "test", explicit)
}

func TestAdmitLink(t *testing.T) {
	snapIn := func(ns string) datasource.Source {
		return datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.SnapshotKind, Namespace: ns, Name: "snap", ThroughLink: true}
	}
	tests := []struct {
		name        string
		in          Input
		want        Reason
		uses        datasource.Source
		holdsSource bool
	}{
		{"with links off a link is a populator's kind",
			Input{Source: linkSource(false), Link: link("prod"), Grant: granted}, ReasonWaitingForPopulator, datasource.Source{}, false},
		{"a link named in another namespace is refused",
			Input{Source: source(datasource.SnapshotGroup, datasource.LinkKind, "prod", true), SnapshotLinks: true, CrossNamespace: true, Link: link("prod"), Grant: granted},
			ReasonCrossNamespaceKindUnsupported, datasource.Source{}, false},
		{"a link cache that cannot be read refuses",
			Input{Source: linkSource(false), SnapshotLinks: true, LinkUnreadable: errors.New("not served")}, ReasonLinkAPIUnavailable, datasource.Source{}, false},
		{"a missing link refuses", Input{Source: linkSource(false), SnapshotLinks: true}, ReasonLinkNotFound, datasource.Source{}, false},
		{"a link to a snapshot in its own namespace needs no grant",
			Input{Source: linkSource(false), SnapshotLinks: true, Link: link(""), Grant: notGranted}, ReasonAllowed, snapIn("test"), true},
		{"a link naming its own namespace explicitly needs no grant either",
			Input{Source: linkSource(false), SnapshotLinks: true, Link: link("test"), Grant: notGranted}, ReasonAllowed, snapIn("test"), true},
		{"a link to another namespace with a grant uses that snapshot",
			Input{Source: linkSource(false), SnapshotLinks: true, Link: link("prod"), Grant: granted}, ReasonAllowed, snapIn("prod"), true},
		{"a link to another namespace without a grant is refused",
			Input{Source: linkSource(false), SnapshotLinks: true, Link: link("prod"), Grant: notGranted}, ReasonGrantMissing, datasource.Source{}, false},
		{"a link whose grant cannot be read is refused and holds its source",
			Input{Source: linkSource(false), SnapshotLinks: true, Link: link("prod"), Grant: unavailable}, ReasonGrantUnavailable, datasource.Source{}, true},
		{"the namespaced-reference gate does not govern links",
			Input{Source: linkSource(false), SnapshotLinks: true, CrossNamespace: false, Link: link("prod"), Grant: granted}, ReasonAllowed, snapIn("prod"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Admit(tt.in)
			if got.Reason != tt.want || got.Uses != tt.uses {
				t.Errorf("Admit() = %+v, want reason %s using %v", got, tt.want, tt.uses)
			}
			if got.HoldsSource() != tt.holdsSource {
				t.Errorf("HoldsSource() = %v, want %v", got.HoldsSource(), tt.holdsSource)
			}
		})
	}
}

// TestDecideLink: a link's snapshot gets the same checks and the same
// content source as a snapshot named directly; its use is one through a
// link, protected by the links' finalizer.
func TestDecideLink(t *testing.T) {
	for _, tt := range snapshotCases {
		t.Run(tt.name, func(t *testing.T) {
			direct := tt.input()
			viaLink := direct
			viaLink.Source, viaLink.SnapshotLinks, viaLink.Link = linkSource(false), true, link("prod")
			viaLink.Snapshot = withLinkFinalizer(direct.Snapshot)
			want, got := Decide(direct), Decide(viaLink)
			if want.Uses.Type() == datasource.Snapshot {
				want.Uses.ThroughLink, want.Uses.ExplicitNamespace = true, false
			}
			if got.Reason != want.Reason || got.Uses != want.Uses || got.Content.String() != want.Content.String() {
				t.Errorf("through a link Decide() = %+v\nnamed directly        %+v", got, want)
			}
		})
	}
}

// withLinkFinalizer returns snap with the links' protection finalizer in
// place of the one of restores naming its namespace.
func withLinkFinalizer(snap *snapv1.VolumeSnapshot) *snapv1.VolumeSnapshot {
	if snap == nil {
		return nil
	}
	snap = snap.DeepCopy()
	for i, f := range snap.Finalizers {
		if f == datasource.CrossNamespaceSnapshotFinalizer {
			snap.Finalizers[i] = datasource.LinkSnapshotFinalizer
		}
	}
	return snap
}

// TestDeletedSnapshotServesOnlyTheUsesItsFinalizerProtects: a snapshot
// whose deletion waits for the finalizer of restores naming its namespace
// does not serve a claim restoring through a link, whose finalizer it does
// not carry, nor the other way round; nor does upstream's shared finalizer
// serve either: only the finalizer of a use promises that use.
func TestDeletedSnapshotServesOnlyTheUsesItsFinalizerProtects(t *testing.T) {
	for _, tt := range []struct {
		name      string
		finalizer string
		viaLink   bool
		want      Reason
	}{
		{"restore naming the namespace, its finalizer", datasource.CrossNamespaceSnapshotFinalizer, false, ReasonAllowed},
		{"restore naming the namespace, links' finalizer", datasource.LinkSnapshotFinalizer, false, ReasonSnapshotBeingDeleted},
		{"restore naming the namespace, upstream's finalizer", datasource.SnapshotFinalizer, false, ReasonSnapshotBeingDeleted},
		{"restore through a link, links' finalizer", datasource.LinkSnapshotFinalizer, true, ReasonAllowed},
		{"restore through a link, the finalizer of restores naming the namespace", datasource.CrossNamespaceSnapshotFinalizer, true, ReasonSnapshotBeingDeleted},
		{"restore through a link, upstream's finalizer", datasource.SnapshotFinalizer, true, ReasonSnapshotBeingDeleted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := snapshotCase{opts: []snapOption{deletionRequested(deletedAt, tt.finalizer)}, claimCreated: deletedAt.Add(-time.Minute)}.input()
			if tt.viaLink {
				in.Source, in.SnapshotLinks, in.Link = linkSource(false), true, link("prod")
			}
			if got := Decide(in); got.Reason != tt.want {
				t.Errorf("Decide() = %+v, want reason %s", got, tt.want)
			}
		})
	}
}

type linkReader map[string]*snapv1alpha1.VolumeSnapshotLink

func (r linkReader) GetLink(namespace, name string) (*snapv1alpha1.VolumeSnapshotLink, error) {
	return r[namespace+"/"+name], nil
}

func TestPolicyGathersTheLink(t *testing.T) {
	snap, content := newPair()
	grants := &grantChecker{decision: granted}
	p := Policy{SnapshotLinks: true, Links: linkReader{"test/foo-link": link("prod")}, Grants: grants,
		Driver: Driver{Name: driver, RestoresSnapshots: true}, Snapshots: &snapshotReader{snap: snap, content: content}}
	claim := restoreClaim("test")
	claim.Spec.DataSourceRef.Kind, claim.Spec.DataSourceRef.Name, claim.Spec.DataSourceRef.Namespace = datasource.LinkKind, "foo-link", nil

	_, v, err := p.Decide(claim, "fast")
	if err != nil || v.Action != Provision || v.Content.GetSnapshot().GetSnapshotId() != "handle-1" || v.Uses.Namespace != "prod" {
		t.Fatalf("Decide() = %+v, %v; want Provision from prod/snap (handle-1)", v, err)
	}
	if want := referencegrant.LinkReference("test", "prod", "snap"); len(grants.checked) != 1 || grants.checked[0] != want {
		t.Errorf("grants checked %v, want once %v", grants.checked, want)
	}

	p.Links = linkReader{}
	if _, v, _ := p.Decide(claim, "fast"); v.Reason != ReasonLinkNotFound {
		t.Errorf("missing link: %+v, want %s", v, ReasonLinkNotFound)
	}
}

func TestCrossesNamespaces(t *testing.T) {
	p := Policy{SnapshotLinks: true, Links: linkReader{"test/foo-link": link("prod"), "test/local": link("test")}}
	named := func(name string) datasource.Source {
		return datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.LinkKind, Namespace: "test", Name: name}
	}
	tests := []struct {
		name string
		p    Policy
		src  datasource.Source
		want bool
	}{
		{"a namespaced dataSourceRef to another namespace", p, source(datasource.SnapshotGroup, datasource.SnapshotKind, "prod", true), true},
		{"a snapshot in the claim's namespace", p, source(datasource.SnapshotGroup, datasource.SnapshotKind, "test", false), false},
		{"a link to another namespace", p, named("foo-link"), true},
		{"a link in its snapshot's namespace", p, named("local"), false},
		{"a link that does not exist", p, named("missing"), false},
		{"a link with --cross-namespace-snapshot off", Policy{}, named("foo-link"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.CrossesNamespaces(tt.src); got != tt.want {
				t.Errorf("CrossesNamespaces(%s) = %v, want %v", tt.src, got, tt.want)
			}
		})
	}
}
