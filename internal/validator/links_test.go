package validator

import (
	"testing"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
)

// TestLinkClaims: a claim restoring through a VolumeSnapshotLink is
// decided as a sidecar with --cross-namespace-snapshot decides it, and
// again when its link or the grant of the link's snapshot changes.
func TestLinkClaims(t *testing.T) {
	e := startEnv(t)
	e.createClaim(newClaim("c", throughLink("l")))
	e.decidedAs("c", Warn)
	e.toldOnce(string(claimsource.ReasonLinkNotFound), "VolumeSnapshotLink")

	e.createLink(link("l", "prod", "foo-backup"))
	e.decidedAs("c", Warn)
	e.toldOnce(string(claimsource.ReasonGrantMissing), "from {group: snapshot.storage.k8s.io, kind: VolumeSnapshotLink, namespace: test}")

	e.createGrant(linkGrant)
	e.decidedAs("c", Quiet)
	e.toldNothing()
}

// TestLinksOffMakeLinksAPopulatorKind: without --cross-namespace-snapshot,
// a link is a populator's kind, quiet once deploy/populator's
// VolumePopulator registers it.
func TestLinksOffMakeLinksAPopulatorKind(t *testing.T) {
	e := startEnv(t, linksOff)
	e.createClaim(newClaim("c", throughLink("l")))
	e.decidedAs("c", Warn)
	e.toldOnce(ReasonUnrecognizedDataSourceKind, `kind "VolumeSnapshotLink"`)
	e.createPopulator(linkKind)
	e.decidedAs("c", Quiet)
	e.toldNothing()
}
