package claimsource

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
)

// A clone across namespaces: the claim test/clone names the
// PersistentVolumeClaim prod/src in spec.dataSourceRef.namespace. The grant
// cases are those of the upstream provisioner v6.4.0's TestProvisionFromPVC
// ("xns PersistentVolumeClaim data source ..."), decided by the real grant
// rule over grants of either API version, as the grant cache decides them.

// grantCache decides references with referencegrant.Decide over its grants.
type grantCache []referencegrant.Grant

func (g grantCache) Check(ref referencegrant.Reference) referencegrant.Decision {
	return referencegrant.Decide(g, ref)
}

// grantVersions convert a ReferenceGrant written as v1 into the Grant the
// cache holds, directly or through the v1beta1 object with the same spec.
var grantVersions = map[string]func(*gatewayv1.ReferenceGrant) referencegrant.Grant{
	"v1": referencegrant.FromV1,
	"v1beta1": func(rg *gatewayv1.ReferenceGrant) referencegrant.Grant {
		return referencegrant.FromV1beta1((*gatewayv1beta1.ReferenceGrant)(rg))
	},
}

// claimGrant is the ReferenceGrant bar in prod with one from and one to
// entry; options change it.
func claimGrant(opts ...func(*gatewayv1.ReferenceGrant)) *gatewayv1.ReferenceGrant {
	rg := &gatewayv1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Name: "bar", Namespace: "prod"},
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: "", Kind: datasource.ClaimKind, Namespace: "test"}},
			To:   []gatewayv1.ReferenceGrantTo{{Group: "", Kind: datasource.ClaimKind}},
		},
	}
	for _, o := range opts {
		o(rg)
	}
	return rg
}

func toName(name string) func(*gatewayv1.ReferenceGrant) {
	return func(rg *gatewayv1.ReferenceGrant) { rg.Spec.To[0].Name = ptr(gatewayv1.ObjectName(name)) }
}

func toGroupKind(group, kind string) func(*gatewayv1.ReferenceGrant) {
	return func(rg *gatewayv1.ReferenceGrant) {
		rg.Spec.To[0].Group, rg.Spec.To[0].Kind = gatewayv1.Group(group), gatewayv1.Kind(kind)
	}
}

func fromEntry(group, kind, namespace string) func(*gatewayv1.ReferenceGrant) {
	return func(rg *gatewayv1.ReferenceGrant) {
		rg.Spec.From[0] = gatewayv1.ReferenceGrantFrom{Group: gatewayv1.Group(group), Kind: gatewayv1.Kind(kind), Namespace: gatewayv1.Namespace(namespace)}
	}
}

func grantIn(namespace string) func(*gatewayv1.ReferenceGrant) {
	return func(rg *gatewayv1.ReferenceGrant) { rg.Namespace = namespace }
}

func withoutEntries(rg *gatewayv1.ReferenceGrant) { rg.Spec.From, rg.Spec.To = nil, nil }

func beingDeleted(rg *gatewayv1.ReferenceGrant) { rg.DeletionTimestamp = &metav1.Time{} }

// crossClone is the claim test/clone naming the claim src in namespace
// (nil: no namespace) with the API group group (nil: none) and kind.
func crossClone(namespace, group *string, kind string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "clone", Namespace: "test"},
		Spec: v1.PersistentVolumeClaimSpec{Resources: requests(1 << 30),
			DataSourceRef: &v1.TypedObjectReference{APIGroup: group, Kind: kind, Name: "src", Namespace: namespace}},
	}
}

// cloneOfProd is test/clone naming prod/src as upstream's cases do, with
// the core group spelled "".
func cloneOfProd() *v1.PersistentVolumeClaim {
	return crossClone(ptr("prod"), ptr(""), datasource.ClaimKind)
}

const missingClaimGrant = `no ReferenceGrant in namespace "prod" allows PersistentVolumeClaims in namespace "test" to use PersistentVolumeClaim "src": ` +
	`create one with from {group: "", kind: PersistentVolumeClaim, namespace: test} and to {group: "", kind: PersistentVolumeClaim, name: src}`

func TestAdmitCloneAcrossNamespaces(t *testing.T) {
	tests := []struct {
		name   string
		claim  *v1.PersistentVolumeClaim
		grants []*gatewayv1.ReferenceGrant
		gate   bool // false: CrossNamespaceSourceProvisioning off
		want   Reason
		// message is the verdict's whole message, when the case checks it.
		message string
	}{
		{name: "a grant to every claim in the namespace allows the clone", claim: cloneOfProd(),
			grants: []*gatewayv1.ReferenceGrant{claimGrant()}, gate: true, want: ReasonAllowed,
			message: `ReferenceGrant "bar" in namespace "prod" allows PersistentVolumeClaims in namespace "test" to use PersistentVolumeClaim "src"`},
		{name: "a grant naming the source claim allows the clone", claim: cloneOfProd(),
			grants: []*gatewayv1.ReferenceGrant{claimGrant(toName("src"))}, gate: true, want: ReasonAllowed},
		{name: "a reference without apiGroup is the core group", claim: crossClone(ptr("prod"), nil, datasource.ClaimKind),
			grants: []*gatewayv1.ReferenceGrant{claimGrant()}, gate: true, want: ReasonAllowed},
		{name: "without a grant the clone is refused, naming the grant to create", claim: cloneOfProd(),
			gate: true, want: ReasonGrantMissing, message: missingClaimGrant},
		{name: "a grant naming another claim does not allow it", claim: cloneOfProd(),
			grants: []*gatewayv1.ReferenceGrant{claimGrant(toName("wrong-toName"))}, gate: true, want: ReasonGrantMissing, message: missingClaimGrant},
		{name: "a grant in the claim's namespace does not allow it", claim: cloneOfProd(),
			grants: []*gatewayv1.ReferenceGrant{claimGrant(grantIn("test"))}, gate: true, want: ReasonGrantMissing},
		{name: "a grant in a third namespace does not allow it", claim: cloneOfProd(),
			grants: []*gatewayv1.ReferenceGrant{claimGrant(grantIn("wrong-reference-namespace"))}, gate: true, want: ReasonGrantMissing},
		{name: "a grant from another group does not allow it", claim: cloneOfProd(),
			grants: []*gatewayv1.ReferenceGrant{claimGrant(fromEntry("wrong.fromGroup", datasource.ClaimKind, "test"))}, gate: true, want: ReasonGrantMissing},
		{name: "a grant from another kind does not allow it", claim: cloneOfProd(),
			grants: []*gatewayv1.ReferenceGrant{claimGrant(fromEntry("", "WrongfromKind", "test"))}, gate: true, want: ReasonGrantMissing},
		{name: "a grant for VolumeSnapshotLinks of the namespace does not allow a claim", claim: cloneOfProd(),
			grants: []*gatewayv1.ReferenceGrant{claimGrant(fromEntry(datasource.SnapshotGroup, datasource.LinkKind, "test"))}, gate: true, want: ReasonGrantMissing},
		{name: "a grant from another namespace does not allow it", claim: cloneOfProd(),
			grants: []*gatewayv1.ReferenceGrant{claimGrant(fromEntry("", datasource.ClaimKind, "wrong-namespace"))}, gate: true, want: ReasonGrantMissing},
		{name: "a grant to another group does not allow it", claim: cloneOfProd(),
			grants: []*gatewayv1.ReferenceGrant{claimGrant(toGroupKind("wrong.toGroup", datasource.ClaimKind))}, gate: true, want: ReasonGrantMissing},
		{name: "a grant to another kind does not allow it", claim: cloneOfProd(),
			grants: []*gatewayv1.ReferenceGrant{claimGrant(toGroupKind("", "WrongtoKind"))}, gate: true, want: ReasonGrantMissing},
		{name: "a grant to VolumeSnapshots does not allow a clone", claim: cloneOfProd(),
			grants: []*gatewayv1.ReferenceGrant{claimGrant(toGroupKind(datasource.SnapshotGroup, datasource.SnapshotKind))}, gate: true, want: ReasonGrantMissing},
		{name: "a grant without from and to entries does not allow it", claim: cloneOfProd(),
			grants: []*gatewayv1.ReferenceGrant{claimGrant(withoutEntries)}, gate: true, want: ReasonGrantMissing},
		{name: "a grant being deleted does not allow it", claim: cloneOfProd(),
			grants: []*gatewayv1.ReferenceGrant{claimGrant(beingDeleted)}, gate: true, want: ReasonGrantMissing},
		// Upstream provisions both without a grant; here an explicit
		// namespace needs one, as for snapshots (KEP-3294 test plan, case 4).
		{name: "a claim in the claim's own namespace named with that namespace needs a grant too",
			claim: func() *v1.PersistentVolumeClaim { c := cloneOfProd(); c.Namespace = "prod"; return c }(), gate: true, want: ReasonGrantMissing},
		{name: "a claim in the claim's own namespace named without namespace needs no grant",
			claim: crossClone(nil, ptr(""), datasource.ClaimKind), gate: true, want: ReasonAllowed},
		// Upstream fails both; here the first is a populator's kind, and the
		// second is left alone with an event.
		{name: "another kind across namespaces is left to its populator, grant or not", claim: crossClone(ptr("prod"), nil, "WrongKind"),
			grants: []*gatewayv1.ReferenceGrant{claimGrant()}, gate: true, want: ReasonWaitingForPopulator},
		{name: "with the gate off the clone is left alone, grant or not", claim: cloneOfProd(),
			grants: []*gatewayv1.ReferenceGrant{claimGrant()}, want: ReasonCrossNamespaceDisabled},
	}
	for version, convert := range grantVersions {
		for _, tt := range tests {
			t.Run(version+": "+tt.name, func(t *testing.T) {
				var grants grantCache
				for _, rg := range tt.grants {
					grants = append(grants, convert(rg))
				}
				p := Policy{CrossNamespace: tt.gate, Grants: grants}
				src, got, err := p.Admit(tt.claim)
				if err != nil {
					t.Fatal(err)
				}
				if got.Reason != tt.want || (tt.message != "" && got.Message != tt.message) {
					t.Errorf("Admit() = %s %q\nwant        %s %q", got.Reason, got.Message, tt.want, tt.message)
				}
				if got.Action == Provision && got.Uses != src {
					t.Errorf("Uses = %v, want the claim's source %v", got.Uses, src)
				}
			})
		}
	}
}

// TestPolicyGathersTheCloneSourceOfAnotherNamespace: the source claim and
// its volume are read from the source's namespace, and the clone's grant is
// checked as the claim's reference.
func TestPolicyGathersTheCloneSourceOfAnotherNamespace(t *testing.T) {
	src, pv := boundSource()
	src.Namespace, pv.Spec.ClaimRef.Namespace = "prod", "prod"
	claims := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	volumes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := claims.Add(src); err != nil {
		t.Fatal(err)
	}
	if err := volumes.Add(pv); err != nil {
		t.Fatal(err)
	}
	grants := &grantChecker{decision: granted}
	p := Policy{CrossNamespace: true, Grants: grants, Driver: Driver{Name: driver, Clones: true},
		Claims: corelisters.NewPersistentVolumeClaimLister(claims), Volumes: corelisters.NewPersistentVolumeLister(volumes)}

	_, v, err := p.Decide(cloneOfProd(), "fast")
	if err != nil || v.Action != Provision || v.Content.GetVolume().GetVolumeId() != "vol-1" || v.Message != granted.Message {
		t.Fatalf("Decide() = %+v, %v; want Provision from vol-1, allowed by the grant", v, err)
	}
	want := referencegrant.ClaimReference("test", "", datasource.ClaimKind, "prod", "src")
	if len(grants.checked) != 1 || grants.checked[0] != want {
		t.Errorf("grants checked %v, want once %v", grants.checked, want)
	}
	if v.Uses != (datasource.Source{Kind: datasource.ClaimKind, Namespace: "prod", Name: "src", ExplicitNamespace: true}) {
		t.Errorf("Uses = %+v, want prod/src named with its namespace", v.Uses)
	}
}
