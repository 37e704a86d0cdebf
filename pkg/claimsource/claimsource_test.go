package claimsource

import (
	"testing"

	"github.com/xns-csi/csi-provisioner/pkg/datasource"
	"github.com/xns-csi/csi-provisioner/pkg/referencegrant"
)

var (
	allowed     = referencegrant.Decision{Allowed: true, Reason: referencegrant.ReasonAllowed, Message: "granted by prod/bar"}
	notGranted  = referencegrant.Decision{Reason: referencegrant.ReasonNotGranted, Message: "no ReferenceGrant"}
	unavailable = referencegrant.Decision{Reason: referencegrant.ReasonUnavailable, Message: "cannot check"}
)

func source(group, kind, namespace string, explicit bool) datasource.Source {
	return datasource.Source{APIGroup: group, Kind: kind, Namespace: namespace, Name: "src", ExplicitNamespace: explicit}
}

func TestDecide(t *testing.T) {
	snapshotInProd := source(datasource.SnapshotGroup, datasource.SnapshotKind, "prod", true)
	tests := []struct {
		name        string
		in          Input
		want        Action
		reason      string
		holdsSource bool
	}{
		{"no data source is provisioned", Input{Source: datasource.Source{Namespace: "test"}}, Provision, ReasonAllowed, true},
		{"a snapshot in the claim's namespace needs no grant",
			Input{Source: source(datasource.SnapshotGroup, datasource.SnapshotKind, "test", false), Grant: notGranted}, Provision, ReasonAllowed, true},
		{"a claim in the claim's namespace is cloned", Input{Source: source("", datasource.ClaimKind, "test", false)}, Provision, ReasonAllowed, true},
		{"a populator's kind is left to the populator", Input{Source: source("example.com", "Backup", "test", false)},
			LeaveAlone, ReasonWaitingForPopulator, false},
		{"a populator's kind in another namespace is left to the populator too",
			Input{Source: source("example.com", "Backup", "prod", true), CrossNamespace: true, Grant: allowed}, LeaveAlone, ReasonWaitingForPopulator, false},
		{"another namespace with the gate off is left alone, grant or not",
			Input{Source: snapshotInProd, Grant: allowed}, LeaveAlone, ReasonCrossNamespaceDisabled, false},
		{"a claim across namespaces is refused even with a grant",
			Input{Source: source("", datasource.ClaimKind, "prod", true), CrossNamespace: true, Grant: allowed},
			Refuse, ReasonCrossNamespaceKindUnsupported, false},
		{"a snapshot across namespaces without a grant is refused",
			Input{Source: snapshotInProd, CrossNamespace: true, Grant: notGranted}, Refuse, string(referencegrant.ReasonNotGranted), false},
		{"a snapshot across namespaces whose grant cannot be read is refused, and keeps its source",
			Input{Source: snapshotInProd, CrossNamespace: true, Grant: unavailable}, Refuse, string(referencegrant.ReasonUnavailable), true},
		{"a snapshot across namespaces with a grant is provisioned",
			Input{Source: snapshotInProd, CrossNamespace: true, Grant: allowed}, Provision, ReasonAllowed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.in)
			if got.Action != tt.want || got.Reason != tt.reason {
				t.Errorf("Decide() = %+v, want action %d reason %s", got, tt.want, tt.reason)
			}
			if got.Action != Provision && got.Message == "" {
				t.Error("a verdict other than Provision must say why")
			}
			if got.HoldsSource() != tt.holdsSource {
				t.Errorf("HoldsSource() = %v, want %v", got.HoldsSource(), tt.holdsSource)
			}
		})
	}
}
