package main

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
)

// TestRestoresAreWhatTheSidecarServes: the claims and grants the bench
// creates for each kind resolve, and are allowed, by the sidecar's own
// rules; a run that measured refusals would still report figures.
func TestRestoresAreWhatTheSidecarServes(t *testing.T) {
	tests := []struct {
		name string
		kind restore
		want datasource.Type
		// checked is what the sidecar checks against the grants of "src"
		// for the claim; unchecked for plain claims.
		checked referencegrant.Reference
	}{
		{"a cross-namespace claim names the snapshot, and its grant allows the claims of its namespace",
			namespaced, datasource.Snapshot, referencegrant.ClaimReference("test", datasource.SnapshotGroup, datasource.SnapshotKind, "src", "snap")},
		{"a link claim names the link, and its grant allows the links of its namespace",
			viaLink, datasource.Link, referencegrant.LinkReference("test", "src", "snap")},
		{"a plain claim names nothing", plain, datasource.None, referencegrant.Reference{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "test", Name: "claim"},
				Spec: v1.PersistentVolumeClaimSpec{DataSourceRef: tt.kind.source("src")}}
			src, err := datasource.Resolve(claim)
			if err != nil || src.Type() != tt.want {
				t.Fatalf("Resolve() = %v (%v), %v; want a source of type %s", src, src.Type(), err, tt.want)
			}
			if !tt.kind.crossesNamespaces() {
				return
			}
			if g := tt.kind.grant("test", "src"); !referencegrant.Allows(referencegrant.FromV1(g), tt.checked) {
				t.Errorf("grant %+v does not allow %+v", g.Spec, tt.checked)
			}
		})
	}
}
