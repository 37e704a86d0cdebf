//go:build e2e

package e2e

import "testing"

// TestE2E runs the cases in a fixed order: the first one needs the
// ReferenceGrant CRD to be absent when the sidecar starts; every later case
// installs it if needed, so any single case also runs alone, e.g.
// go test -tags e2e ./test/e2e -run 'TestE2E/KEPTestPlan'.
func TestE2E(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"ReferenceGrantCRDInstalledLater", testGrantCRDInstalledLater},
		{"KEPTestPlan", testKEPTestPlan},
		{"Story1", testStory1},
		{"GrantCreatedAfterClaim", testGrantCreatedAfterClaim},
		{"GrantRevoked", testGrantRevoked},
		{"SnapshotDeletedWhileProvisioning", testSnapshotDeletedWhileProvisioning},
		{"SameNamespaceSources", testSameNamespaceSources},
		{"Metrics", testMetrics},
		{"LeaderElection", testLeaderElection},
		{"GrantWatchLost", testGrantWatchLost},
		{"RestartWithPendingRestore", testRestartWithPendingRestore},
		{"VolumeAttributesClass", testVolumeAttributesClass},
		{"CrossNamespaceClone", testCrossNamespaceClone},
	} {
		if !t.Run(c.name, c.run) && testing.Short() {
			return
		}
	}
}
