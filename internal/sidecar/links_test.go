package sidecar

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// The component tests of restores through VolumeSnapshotLinks
// (--cross-namespace-snapshot), KEP-3294's Story 1 in its link form: the
// link test/foo-link names the snapshot prod/foo-backup, and the grant
// prod/bar-links allows links in test to use it.

const noLinkGrantEvent = `no ReferenceGrant in namespace "prod" allows VolumeSnapshotLinks in namespace "test"`

func throughLink(name string) claimOption {
	return fromRef(datasource.SnapshotGroup, datasource.LinkKind, name)
}

func (e *env) createLink(namespace, name, snapNamespace, snapName string) {
	e.t.Helper()
	l := &snapv1alpha1.VolumeSnapshotLink{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: snapv1alpha1.VolumeSnapshotLinkSpec{Source: snapv1alpha1.VolumeSnapshotLinkSource{Namespace: snapNamespace, Name: snapName}}}
	if _, err := e.links.SnapshotV1alpha1().VolumeSnapshotLinks(namespace).Create(e.ctx, l, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) deleteLink(namespace, name string) {
	e.t.Helper()
	if err := e.links.SnapshotV1alpha1().VolumeSnapshotLinks(namespace).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// createLinkGrant allows the VolumeSnapshotLinks in fromNamespace to name
// snapshot (every snapshot when "") in namespace.
func (e *env) createLinkGrant(namespace, grantName, fromGroup, fromKind, fromNamespace, snapshot string) {
	e.t.Helper()
	to := gatewayv1.ReferenceGrantTo{Group: datasource.SnapshotGroup, Kind: datasource.SnapshotKind}
	if snapshot != "" {
		n := gatewayv1.ObjectName(snapshot)
		to.Name = &n
	}
	g := &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Name: grantName, Namespace: namespace},
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.Group(fromGroup), Kind: gatewayv1.Kind(fromKind), Namespace: gatewayv1.Namespace(fromNamespace)}},
			To:   []gatewayv1.ReferenceGrantTo{to},
		}}
	if _, err := e.gateway.GatewayV1().ReferenceGrants(namespace).Create(e.ctx, g, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) grantLinks(snapshot string) {
	e.t.Helper()
	e.createLinkGrant("prod", "bar-links", datasource.SnapshotGroup, datasource.LinkKind, "test", snapshot)
}

// waitForLinkCondition waits until the link's condition has status and
// reason, and returns it.
func (e *env) waitForLinkCondition(namespace, name, kind string, status metav1.ConditionStatus, reason claimsource.Reason) metav1.Condition {
	e.t.Helper()
	var got metav1.Condition
	e.waitFor("condition "+kind+"="+string(status)+" ("+string(reason)+") on link "+namespace+"/"+name, func() bool {
		l, err := e.links.SnapshotV1alpha1().VolumeSnapshotLinks(namespace).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		c := meta.FindStatusCondition(l.Status.Conditions, kind)
		if c == nil || c.Status != status || c.Reason != string(reason) {
			return false
		}
		got = *c
		return true
	})
	return got
}

func TestStory1ThroughALink(t *testing.T) {
	e := startEnv(t, withLinks(), gateOff(), knownSnapshots("prod/foo-backup"))
	e.createSnapshot("prod", "foo-backup", true)
	e.grantLinks("foo-backup")
	e.createLink("test", "foo-link", "prod", "foo-backup")
	claim := e.createClaim("test", "foo-testing", throughLink("foo-link"))

	e.waitForPV(claim)
	assertRestoredFrom(t, e, claim, snapshotHandle("prod", "foo-backup"))
	e.waitForLinkCondition("test", "foo-link", snapv1alpha1.ConditionResolved, metav1.ConditionTrue, claimsource.ReasonSnapshotFound)
	e.waitForLinkCondition("test", "foo-link", snapv1alpha1.ConditionAllowed, metav1.ConditionTrue, claimsource.ReasonGranted)
	if got := e.metric("cross_namespace_persistentvolumeclaim_provision_total", "storage_class", className); got != 1 {
		t.Errorf("cross_namespace_persistentvolumeclaim_provision_total{fast} = %v, want 1", got)
	}
	if got := e.metric("persistentvolumeclaim_provision_by_source_total", "source_kind", datasource.LinkKind); got != 1 {
		t.Errorf("persistentvolumeclaim_provision_by_source_total{source_kind=VolumeSnapshotLink} = %v, want 1", got)
	}
}

func TestLinkInTheSnapshotsNamespaceNeedsNoGrant(t *testing.T) {
	e := startEnv(t, withLinks(), knownSnapshots("prod/foo-backup"))
	e.createSnapshot("prod", "foo-backup", true)
	e.createLink("prod", "local", "", "foo-backup")
	claim := e.createClaim("prod", "copy", throughLink("local"))
	e.waitForPV(claim)
	assertRestoredFrom(t, e, claim, snapshotHandle("prod", "foo-backup"))
	e.waitForLinkCondition("prod", "local", snapv1alpha1.ConditionAllowed, metav1.ConditionTrue, claimsource.ReasonSameNamespace)
	if got := e.metric("cross_namespace_persistentvolumeclaim_provision_total", "storage_class", className); got != 0 {
		t.Errorf("cross_namespace_persistentvolumeclaim_provision_total{fast} = %v, want 0 for a link within one namespace", got)
	}
}

func TestLinkGrantCreatedLaterRequeuesTheClaimAtOnce(t *testing.T) {
	// The one-hour retry backoff of startEnv: only the grant's arrival can
	// re-queue the claim in time.
	e := startEnv(t, withLinks(), knownSnapshots("prod/foo-backup"))
	e.createSnapshot("prod", "foo-backup", true)
	e.createLink("test", "foo-link", "prod", "foo-backup")
	claim := e.createClaim("test", "foo-testing", throughLink("foo-link"))
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", noLinkGrantEvent)
	cond := e.waitForLinkCondition("test", "foo-link", snapv1alpha1.ConditionAllowed, metav1.ConditionFalse, claimsource.ReasonGrantMissing)
	if want := "kind: VolumeSnapshotLink"; !strings.Contains(cond.Message, want) {
		t.Errorf("Allowed condition %q does not name the grant that is missing (%q)", cond.Message, want)
	}
	e.noPV(claim)

	e.grantLinks("")
	e.waitForPV(claim)
	e.waitForLinkCondition("test", "foo-link", snapv1alpha1.ConditionAllowed, metav1.ConditionTrue, claimsource.ReasonGranted)
}

func TestLinkCreatedAfterTheClaim(t *testing.T) {
	e := startEnv(t, withLinks(), knownSnapshots("prod/foo-backup"))
	e.createSnapshot("prod", "foo-backup", true)
	e.grantLinks("foo-backup")
	claim := e.createClaim("test", "foo-testing", throughLink("foo-link"))
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", "VolumeSnapshotLink test/foo-link does not exist")
	e.noPV(claim)

	e.createLink("test", "foo-link", "prod", "foo-backup")
	e.waitForPV(claim)
}

func TestLinkToASnapshotCreatedLater(t *testing.T) {
	e := startEnv(t, withLinks(), knownSnapshots("prod/foo-backup"))
	e.grantLinks("foo-backup")
	e.createLink("test", "foo-link", "prod", "foo-backup")
	claim := e.createClaim("test", "foo-testing", throughLink("foo-link"))
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", "does not exist")
	e.waitForLinkCondition("test", "foo-link", snapv1alpha1.ConditionResolved, metav1.ConditionFalse, claimsource.ReasonSnapshotNotFound)
	e.noPV(claim)

	e.createSnapshot("prod", "foo-backup", true)
	e.waitForPV(claim)
	e.waitForLinkCondition("test", "foo-link", snapv1alpha1.ConditionResolved, metav1.ConditionTrue, claimsource.ReasonSnapshotFound)
}

func TestLinkDeletedBeforeProvisioningIsRefused(t *testing.T) {
	e := startEnv(t, withLinks(), knownSnapshots("prod/foo-backup"), oneProvisioningWorker())
	e.createSnapshot("prod", "foo-backup", true)
	e.createLink("test", "foo-link", "prod", "foo-backup")
	claim := e.createClaim("test", "foo-testing", throughLink("foo-link"))
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", noLinkGrantEvent)

	e.deleteLink("test", "foo-link")
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", "VolumeSnapshotLink test/foo-link does not exist")
	e.grantLinks("foo-backup") // re-queues nothing: no link names the snapshot
	e.claimsSeen()
	e.noPV(claim)
	if n := len(e.createRequests(claim)); n != 0 {
		t.Errorf("driver got %d CreateVolume calls, want 0", n)
	}
}

func TestLinkGrantRevokedBeforeProvisioningIsRefused(t *testing.T) {
	e := startEnv(t, withLinks(), knownSnapshots("prod/foo-backup"))
	e.createSnapshot("prod", "foo-backup", true)
	e.grantLinks("foo-backup")
	e.createLink("test", "foo-link", "prod", "foo-backup")
	e.waitForLinkCondition("test", "foo-link", snapv1alpha1.ConditionAllowed, metav1.ConditionTrue, claimsource.ReasonGranted)
	e.deleteGrant("prod", "bar-links")
	// The link's status is computed from the same grant cache as the
	// decision: once it says so, the revocation has reached the cache.
	e.waitForLinkCondition("test", "foo-link", snapv1alpha1.ConditionAllowed, metav1.ConditionFalse, claimsource.ReasonGrantMissing)
	// Nor does the link say any longer whether the snapshot exists.
	e.waitForLinkCondition("test", "foo-link", snapv1alpha1.ConditionResolved, metav1.ConditionUnknown, claimsource.ReasonGrantMissing)

	claim := e.createClaim("test", "foo-testing", throughLink("foo-link"))
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", noLinkGrantEvent)
	e.noPV(claim)
}

func TestGrantsForOtherReferencesDoNotAllowALink(t *testing.T) {
	e := startEnv(t, withLinks(), knownSnapshots("prod/foo-backup"))
	e.createSnapshot("prod", "foo-backup", true)
	e.createGrant("prod", "claims", "test", "foo-backup") // from PersistentVolumeClaims, not links
	e.createLinkGrant("prod", "other-namespace", datasource.SnapshotGroup, datasource.LinkKind, "staging", "foo-backup")
	e.createLinkGrant("prod", "other-snapshot", datasource.SnapshotGroup, datasource.LinkKind, "test", "bar-backup")
	e.createLinkGrant("prod", "wrong-group", "snapshot.storage.k8s.io/v1alpha1", datasource.LinkKind, "test", "foo-backup")
	e.createLinkGrant("test", "wrong-side", datasource.SnapshotGroup, datasource.LinkKind, "test", "foo-backup")
	e.createLink("test", "foo-link", "prod", "foo-backup")
	claim := e.createClaim("test", "foo-testing", throughLink("foo-link"))
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", noLinkGrantEvent)
	e.noPV(claim)
}

func TestLinkCRDInstalledLaterWorksWithoutRestart(t *testing.T) {
	e := startEnv(t, withLinks(), linkCRDAbsent(), knownSnapshots("prod/foo-backup"))
	e.createSnapshot("prod", "foo-backup", true)
	e.grantLinks("foo-backup")
	claim := e.createClaim("test", "foo-testing", throughLink("foo-link"))
	e.waitForEvent(claim, v1.EventTypeWarning, "ProvisioningFailed", "VolumeSnapshotLink API (snapshot.storage.k8s.io/v1alpha1/volumesnapshotlinks) is not served by the API server: is the CRD installed?")
	e.noPV(claim)

	e.linkAPI.serve(linkResources) // the CRD is installed
	e.createLink("test", "foo-link", "prod", "foo-backup")
	e.waitForPV(claim)
}

func TestLinksOffLeaveLinkClaimsToAPopulator(t *testing.T) {
	e := startEnv(t, knownSnapshots("prod/foo-backup"), oneProvisioningWorker())
	e.createSnapshot("prod", "foo-backup", true)
	e.grantLinks("foo-backup")
	e.createLink("test", "foo-link", "prod", "foo-backup")
	claim := e.createClaim("test", "foo-testing", throughLink("foo-link"))
	e.waitForEvent(claim, v1.EventTypeNormal, string(claimsource.ReasonWaitingForPopulator), "VolumeSnapshotLink")
	e.claimsSeen()
	e.noPV(claim)
	if n := len(e.createRequests(claim)); n != 0 {
		t.Errorf("driver got %d CreateVolume calls with --cross-namespace-snapshot off, want 0", n)
	}
}
