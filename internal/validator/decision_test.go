package validator

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	popv1beta1 "github.com/xns-csi/csi-provisioner/pkg/apis/populator/v1beta1"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// cluster is what the caches hold in a case of TestDecide.
type cluster struct {
	populators []*popv1beta1.VolumePopulator
	grants     []referencegrant.Grant
	links      []*snapv1alpha1.VolumeSnapshotLink
	// populatorsErr, grantsErr and linksErr make a cache unreadable.
	populatorsErr, grantsErr, linksErr error
	// gateOff and linksOff are the sidecars' settings: the
	// CrossNamespaceSourceProvisioning gate off, --cross-namespace-snapshot
	// off.
	gateOff, linksOff bool
}

// decide gathers the claim's input from c, through the sidecar's own
// policy, and decides.
func (c cluster) decide(claim *v1.PersistentVolumeClaim) Outcome {
	grants := staticGrants{grants: c.grants, err: c.grantsErr}
	links := staticLinks{links: c.links, err: c.linksErr}
	g := gatherer{
		policy:     claimsource.Policy{CrossNamespace: !c.gateOff, Grants: grants, SnapshotLinks: !c.linksOff, Links: links},
		populators: staticRegistry{kinds: c.populators, err: c.populatorsErr},
		grants:     grants,
	}
	if !c.linksOff {
		g.links = links
	}
	return Decide(g.gather(claim))
}

var (
	notServed  = fmt.Errorf("ReferenceGrant API (gateway.networking.k8s.io/v1/referencegrants) is %w: is the CRD installed?", optionalapi.ErrNotServed)
	notSynced  = fmt.Errorf("API (x/v1/y): %w", optionalapi.ErrNotSynced)
	forbidden  = fmt.Errorf("cannot list x/v1/y: %w", optionalapi.ErrForbidden)
	hello      = populator("hello", "hello.example.com", "Hello")
	linkKind   = populator("volumesnapshotlink", datasource.SnapshotGroup, datasource.LinkKind)
	otherHello = populator("other", "other.example.com", "Hello")
)

// grantMissing is the end of the message of a missing grant for a claim
// in test restoring foo-backup in prod: the grant to create, in
// referencegrant's words (the sidecar's).
const grantMissing = `create one with from {group: "", kind: PersistentVolumeClaim, namespace: test} and to {group: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: foo-backup}`

// TestDecide is seed 001's test list for the volume-data-source-validator
// ("To test the volume-data-source-validator, we need to check the
// following cases"), then the cases of namespaces and grants (KEP-3294)
// this validator adds. Each case gathers through claimsource.Policy, so the
// verdicts are the sidecar's.
func TestDecide(t *testing.T) {
	tests := []struct {
		name    string
		cluster cluster
		claim   *v1.PersistentVolumeClaim
		want    Action
		reason  string
		// message is a part of the event's message.
		message string
	}{
		// Seed 001's list.
		{name: "a claim without a dataSourceRef causes no event",
			claim: newClaim("c"), want: Quiet},
		{name: "a claim with a VolumeSnapshot dataSourceRef causes no event",
			claim: newClaim("c", restoring("", "foo-backup")), want: Quiet},
		{name: "a claim with a PVC dataSourceRef causes no event",
			claim: newClaim("c", cloning("", "foo")), want: Quiet},
		{name: "a CRD dataSourceRef no volume populator registers causes UnrecognizedDataSourceKind",
			claim: newClaim("c", populatedBy("hello.example.com", "Hello")), want: Warn, reason: ReasonUnrecognizedDataSourceKind,
			message: `no VolumePopulator registers kind "Hello" of API group "hello.example.com"`},
		{name: "a CRD dataSourceRef a volume populator registers causes no event",
			cluster: cluster{populators: []*popv1beta1.VolumePopulator{hello}},
			claim:   newClaim("c", populatedBy("hello.example.com", "Hello")), want: Quiet},

		// Around the list.
		{name: "the message starts with upstream's words",
			claim: newClaim("c", populatedBy("hello.example.com", "Hello")), want: Warn, reason: ReasonUnrecognizedDataSourceKind,
			message: "The datasource for this PVC does not match any registered VolumePopulator"},
		{name: "a populator of the same kind in another group does not register it",
			cluster: cluster{populators: []*popv1beta1.VolumePopulator{otherHello}},
			claim:   newClaim("c", populatedBy("hello.example.com", "Hello")), want: Warn, reason: ReasonUnrecognizedDataSourceKind},
		{name: "the legacy dataSource of a snapshot causes no event",
			claim: newClaim("c", legacySnapshot("foo-backup")), want: Quiet},
		{name: "an apiGroup with a version, as KEP-3294's example spells it, is an invalid data source",
			claim: newClaim("c", ref("snapshot.storage.k8s.io/v1", datasource.SnapshotKind, "", "foo-backup")), want: Warn,
			reason: ReasonInvalidDataSource, message: "snapshot.storage.k8s.io/v1"},
		{name: "a bound claim causes no event, whatever its source",
			claim: newClaim("c", populatedBy("hello.example.com", "Hello"), bound), want: Quiet},
		{name: "a claim being deleted causes no event",
			claim: newClaim("c", populatedBy("hello.example.com", "Hello"), deleting), want: Quiet},
		{name: "a populator kind waits while the VolumePopulators cannot be read: unknown is not unrecognized",
			cluster: cluster{populatorsErr: notSynced},
			claim:   newClaim("c", populatedBy("hello.example.com", "Hello")), want: Wait},
		{name: "a populator kind waits while the VolumePopulator CRD is not installed",
			cluster: cluster{populatorsErr: notServed},
			claim:   newClaim("c", populatedBy("hello.example.com", "Hello")), want: Wait},
		{name: "a snapshot in the claim's namespace does not need the VolumePopulators",
			cluster: cluster{populatorsErr: notServed},
			claim:   newClaim("c", restoring("", "foo-backup")), want: Quiet},

		// Namespaces and grants (KEP-3294).
		{name: "a snapshot in another namespace without a grant causes the event naming the grant to create",
			claim: newClaim("c", restoring("prod", "foo-backup")), want: Warn, reason: string(claimsource.ReasonGrantMissing), message: grantMissing},
		{name: "a snapshot in another namespace with a grant causes no event",
			cluster: cluster{grants: []referencegrant.Grant{aliceGrant}},
			claim:   newClaim("c", restoring("prod", "foo-backup")), want: Quiet},
		{name: "a grant for another snapshot does not allow it",
			cluster: cluster{grants: []referencegrant.Grant{grantFor("", datasource.ClaimKind, datasource.SnapshotGroup, datasource.SnapshotKind, "other")}},
			claim:   newClaim("c", restoring("prod", "foo-backup")), want: Warn, reason: string(claimsource.ReasonGrantMissing), message: grantMissing},
		{name: "naming its own namespace explicitly needs a grant too (KEP-3294 test plan)",
			claim: newClaim("c", restoring("test", "foo-backup")), want: Warn, reason: string(claimsource.ReasonGrantMissing),
			message: `no ReferenceGrant in namespace "test"`},
		{name: "a claim cloned from another namespace without a grant causes the event naming the grant (as the sidecar decides)",
			claim: newClaim("c", cloning("prod", "foo")), want: Warn, reason: string(claimsource.ReasonGrantMissing),
			message: `to {group: "", kind: PersistentVolumeClaim, name: foo}`},
		{name: "a claim cloned from another namespace with a grant causes no event",
			cluster: cluster{grants: []referencegrant.Grant{cloneGrant}},
			claim:   newClaim("c", cloning("prod", "foo")), want: Quiet},
		{name: "a bound claim across namespaces causes no event, grant or not",
			claim: newClaim("c", restoring("prod", "foo-backup"), bound), want: Quiet},
		{name: "a populator kind in another namespace is the populator's to check, when registered",
			cluster: cluster{populators: []*popv1beta1.VolumePopulator{hello}},
			claim:   newClaim("c", ref("hello.example.com", "Hello", "prod", "src")), want: Quiet},
		{name: "a populator kind in another namespace no populator registers is unrecognized",
			claim: newClaim("c", ref("hello.example.com", "Hello", "prod", "src")), want: Warn, reason: ReasonUnrecognizedDataSourceKind},
		{name: "without the ReferenceGrant CRD the claim is told, by the validator",
			cluster: cluster{grantsErr: notServed},
			claim:   newClaim("c", restoring("prod", "foo-backup")), want: Warn, reason: string(claimsource.ReasonGrantUnavailable),
			message: "is the CRD installed?"},
		{name: "a ReferenceGrant list forbidden to the validator is told as the validator's own permission",
			cluster: cluster{grantsErr: forbidden},
			claim:   newClaim("c", restoring("prod", "foo-backup")), want: Warn, reason: string(claimsource.ReasonGrantUnavailable),
			message: "the validator's own permission is missing, not the csi-provisioner's"},
		{name: "while the grant cache syncs the claim waits",
			cluster: cluster{grantsErr: notSynced},
			claim:   newClaim("c", restoring("prod", "foo-backup")), want: Wait},
		{name: "with the sidecars' gate off another namespace is not provisioned, and the claim is told",
			cluster: cluster{gateOff: true, grants: []referencegrant.Grant{aliceGrant}},
			claim:   newClaim("c", restoring("prod", "foo-backup")), want: Warn, reason: string(claimsource.ReasonCrossNamespaceDisabled)},
		{name: "a dataSourceRef the API server dropped (its alpha gate off) is told",
			claim: newClaim("c", refDropped), want: Warn, reason: string(claimsource.ReasonDataSourceRefDropped),
			message: "CrossNamespaceVolumeDataSource"},

		// VolumeSnapshotLinks (KEP-3294's alternative), as a sidecar with
		// --cross-namespace-snapshot decides them.
		{name: "a link to a snapshot in its own namespace causes no event",
			cluster: cluster{links: []*snapv1alpha1.VolumeSnapshotLink{link("l", "", "foo-backup")}},
			claim:   newClaim("c", throughLink("l")), want: Quiet},
		{name: "a link to another namespace without a grant causes the event naming the link's grant",
			cluster: cluster{links: []*snapv1alpha1.VolumeSnapshotLink{link("l", "prod", "foo-backup")}},
			claim:   newClaim("c", throughLink("l")), want: Warn, reason: string(claimsource.ReasonGrantMissing),
			message: `from {group: snapshot.storage.k8s.io, kind: VolumeSnapshotLink, namespace: test}`},
		{name: "a link to another namespace with a grant causes no event",
			cluster: cluster{links: []*snapv1alpha1.VolumeSnapshotLink{link("l", "prod", "foo-backup")}, grants: []referencegrant.Grant{linkGrant}},
			claim:   newClaim("c", throughLink("l")), want: Quiet},
		{name: "a link that does not exist is told",
			claim: newClaim("c", throughLink("l")), want: Warn, reason: string(claimsource.ReasonLinkNotFound)},
		{name: "a link named in another namespace is a kind KEP-3294 does not cover there",
			claim: newClaim("c", ref(datasource.SnapshotGroup, datasource.LinkKind, "prod", "l")), want: Warn,
			reason: string(claimsource.ReasonCrossNamespaceKindUnsupported)},
		{name: "while the link cache syncs the claim waits",
			cluster: cluster{linksErr: notSynced},
			claim:   newClaim("c", throughLink("l")), want: Wait},
		{name: "without the VolumeSnapshotLink CRD a link claim is told",
			cluster: cluster{linksErr: notServed},
			claim:   newClaim("c", throughLink("l")), want: Warn, reason: string(claimsource.ReasonLinkAPIUnavailable)},
		{name: "without --cross-namespace-snapshot a link is a populator's kind: registered by deploy/populator, no event",
			cluster: cluster{linksOff: true, populators: []*popv1beta1.VolumePopulator{linkKind}},
			claim:   newClaim("c", throughLink("l")), want: Quiet},
		{name: "without --cross-namespace-snapshot an unregistered link kind is unrecognized",
			cluster: cluster{linksOff: true},
			claim:   newClaim("c", throughLink("l")), want: Warn, reason: ReasonUnrecognizedDataSourceKind},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.cluster.decide(tt.claim)
			if got.Action != tt.want || (tt.want == Warn && got.Reason != tt.reason) {
				t.Fatalf("Decide() = %v %s (%s), want %v %s", got.Action, got.Reason, got.Message, tt.want, tt.reason)
			}
			if !strings.Contains(got.Message, tt.message) {
				t.Errorf("message %q does not contain %q", got.Message, tt.message)
			}
			if tt.want == Warn && got.Message == "" {
				t.Error("a Warning without a message")
			}
		})
	}
}
