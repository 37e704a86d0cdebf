package sidecar

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// Each malformed data source gets an event that says what is wrong, and no
// volume (issue 14: hostile input). The fuzz targets of internal/shared/datasource and
// internal/shared/claimsource check the decision; this checks that the running sidecar
// tells the claim's owner.
func TestMalformedDataSourcesGetAClearEvent(t *testing.T) {
	tests := []struct {
		name      string
		source    claimOption
		eventType string
		reason    string
		message   string
	}{
		{"a group with a version, as in the KEP's example", fromRef("snapshot.storage.k8s.io/v1", "VolumeSnapshot", "snap"),
			v1.EventTypeWarning, "ProvisioningFailed", `contains a version; use the API group alone, e.g. "snapshot.storage.k8s.io"`},
		{"an uppercase group", fromRef("Snapshot.storage.k8s.io", "VolumeSnapshot", "snap"),
			v1.EventTypeWarning, "ProvisioningFailed", "lowercase RFC 1123 subdomain"},
		{"a group with a trailing dot", fromRef("snapshot.storage.k8s.io.", "VolumeSnapshot", "snap"),
			v1.EventTypeWarning, "ProvisioningFailed", "lowercase RFC 1123 subdomain"},
		{"a reference that names nothing", fromRef("", "", ""),
			v1.EventTypeWarning, "ProvisioningFailed", "names no kind and no object"},
		{"dataSource and dataSourceRef that disagree", func(c *v1.PersistentVolumeClaim) {
			fromSnapshot("", "a")(c)
			c.Spec.DataSourceRef.Name = "b"
		}, v1.EventTypeWarning, "ProvisioningFailed", "name different objects"},
		{"a lowercase kind is not a VolumeSnapshot", fromRef("snapshot.storage.k8s.io", "volumesnapshot", "snap"),
			v1.EventTypeNormal, "WaitingForPopulator", "volumesnapshot.snapshot.storage.k8s.io"},
	}
	e := startEnv(t)
	for i, tt := range tests {
		claim := e.createClaim("apps", fmt.Sprintf("malformed-%d", i), tt.source)
		t.Logf("%s: %s", claim.Name, tt.name)
		e.waitForEvent(claim, tt.eventType, tt.reason, tt.message)
		e.noPV(claim)
	}
}
