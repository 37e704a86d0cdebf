package claimsource

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
)

var (
	granted     = referencegrant.Decision{Allowed: true, Reason: referencegrant.ReasonAllowed, Message: "granted by prod/bar"}
	notGranted  = referencegrant.Decision{Reason: referencegrant.ReasonNotGranted, Message: "no ReferenceGrant"}
	unavailable = referencegrant.Decision{Reason: referencegrant.ReasonUnavailable, Message: "cannot check"}
)

const driver = "csi.example.com"

func ptr[T any](v T) *T { return &v }

func requests(bytes int64) v1.VolumeResourceRequirements {
	return v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: *resource.NewQuantity(bytes, resource.BinarySI)}}
}

// snapshotIn is the snapshot "snap" in namespace, named explicitly.
func snapshotIn(namespace string) datasource.Source {
	src := source(datasource.SnapshotGroup, datasource.SnapshotKind, namespace, true)
	src.Name = "snap"
	return src
}

func source(group, kind, namespace string, explicit bool) datasource.Source {
	return datasource.Source{APIGroup: group, Kind: kind, Namespace: namespace, Name: "src", ExplicitNamespace: explicit}
}

func TestAdmit(t *testing.T) {
	snapshotInProd := source(datasource.SnapshotGroup, datasource.SnapshotKind, "prod", true)
	tests := []struct {
		name        string
		in          Input
		want        Action
		reason      Reason
		holdsSource bool
	}{
		{"no data source is provisioned", Input{Source: datasource.Source{Namespace: "test"}}, Provision, ReasonAllowed, true},
		{"a snapshot in the claim's namespace needs no grant",
			Input{Source: source(datasource.SnapshotGroup, datasource.SnapshotKind, "test", false), Grant: notGranted}, Provision, ReasonAllowed, true},
		{"a claim in the claim's namespace is cloned", Input{Source: source("", datasource.ClaimKind, "test", false)}, Provision, ReasonAllowed, true},
		{"a populator's kind is left to the populator", Input{Source: source("example.com", "Backup", "test", false)},
			LeaveAlone, ReasonWaitingForPopulator, false},
		{"a populator's kind in another namespace is left to the populator too",
			Input{Source: source("example.com", "Backup", "prod", true), CrossNamespace: true, Grant: granted}, LeaveAlone, ReasonWaitingForPopulator, false},
		{"another namespace with the gate off is left alone, grant or not",
			Input{Source: snapshotInProd, Grant: granted}, LeaveAlone, ReasonCrossNamespaceDisabled, false},
		{"a claim across namespaces with a grant is cloned",
			Input{Source: source("", datasource.ClaimKind, "prod", true), CrossNamespace: true, Grant: granted}, Provision, ReasonAllowed, true},
		{"a claim across namespaces without a grant is refused, and holds nothing",
			Input{Source: source("", datasource.ClaimKind, "prod", true), CrossNamespace: true, Grant: notGranted}, Refuse, ReasonGrantMissing, false},
		{"a claim across namespaces whose grant cannot be read is refused, and keeps its source",
			Input{Source: source("", datasource.ClaimKind, "prod", true), CrossNamespace: true, Grant: unavailable}, Refuse, ReasonGrantUnavailable, true},
		{"a claim across namespaces with the gate off is left alone",
			Input{Source: source("", datasource.ClaimKind, "prod", true), Grant: granted}, LeaveAlone, ReasonCrossNamespaceDisabled, false},
		{"a snapshot across namespaces without a grant is refused",
			Input{Source: snapshotInProd, CrossNamespace: true, Grant: notGranted}, Refuse, ReasonGrantMissing, false},
		{"a snapshot across namespaces whose grant cannot be read is refused, and keeps its source",
			Input{Source: snapshotInProd, CrossNamespace: true, Grant: unavailable}, Refuse, ReasonGrantUnavailable, true},
		{"a snapshot across namespaces with a grant is provisioned",
			Input{Source: snapshotInProd, CrossNamespace: true, Grant: granted}, Provision, ReasonAllowed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Admit(tt.in)
			if got.Action != tt.want || got.Reason != tt.reason {
				t.Errorf("Admit() = %+v, want action %d reason %s", got, tt.want, tt.reason)
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

// TestDecideRunsTheChainInOrder: the claim-level refusals come before the
// driver's capabilities, which come before the source's state.
func TestDecideRunsTheChainInOrder(t *testing.T) {
	claim := &v1.PersistentVolumeClaim{Spec: v1.PersistentVolumeClaimSpec{Resources: requests(1 << 30)}}
	canRestore := Driver{Name: driver, RestoresSnapshots: true, Clones: true}
	tests := []struct {
		name string
		in   Input
		want Reason
	}{
		{"a missing grant is reported before the missing snapshot",
			Input{Claim: claim, Source: snapshotIn("prod"), CrossNamespace: true, Grant: notGranted, Driver: canRestore}, ReasonGrantMissing},
		{"a driver that cannot restore is reported before the missing snapshot",
			Input{Claim: claim, Source: snapshotIn("prod"), CrossNamespace: true, Grant: granted, Driver: Driver{Name: driver}},
			ReasonSnapshotRestoreUnsupported},
		{"a driver that cannot clone is reported before the missing claim",
			Input{Claim: claim, Source: source("", datasource.ClaimKind, "test", false), Driver: Driver{Name: driver, RestoresSnapshots: true}},
			ReasonCloneUnsupported},
		{"then the snapshot's state", Input{Claim: claim, Source: snapshotIn("prod"), CrossNamespace: true, Grant: granted, Driver: canRestore},
			ReasonSnapshotNotFound},
		{"a populator's kind is left alone whatever the driver", Input{Claim: claim, Source: source("example.com", "Backup", "test", false)},
			ReasonWaitingForPopulator},
		{"no data source is provisioned empty", Input{Claim: claim, Source: datasource.Source{Namespace: "test"}}, ReasonAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.in)
			if got.Reason != tt.want {
				t.Errorf("Decide() = %+v, want reason %s", got, tt.want)
			}
			if got.Reason == ReasonAllowed && got.Content != nil {
				t.Errorf("a claim without source got content %v", got.Content)
			}
		})
	}
}
