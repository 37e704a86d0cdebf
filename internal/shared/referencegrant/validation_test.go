package referencegrant

import (
	"strings"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// grantOption changes the spec newGrantSpec builds.
type grantOption func(*gatewayv1.ReferenceGrantSpec)

// newGrantSpec returns Story 1's valid grant from claims in test to the
// snapshot foo-backup, changed by opts.
func newGrantSpec(opts ...grantOption) gatewayv1.ReferenceGrantSpec {
	name := gatewayv1.ObjectName("foo-backup")
	spec := gatewayv1.ReferenceGrantSpec{
		From: []gatewayv1.ReferenceGrantFrom{{Group: "", Kind: "PersistentVolumeClaim", Namespace: "test"}},
		To:   []gatewayv1.ReferenceGrantTo{{Group: "snapshot.storage.k8s.io", Kind: "VolumeSnapshot", Name: &name}},
	}
	for _, opt := range opts {
		opt(&spec)
	}
	return spec
}

func toGroup(g string) grantOption {
	return func(s *gatewayv1.ReferenceGrantSpec) { s.To[0].Group = gatewayv1.Group(g) }
}

func fromGroup(g string) grantOption {
	return func(s *gatewayv1.ReferenceGrantSpec) { s.From[0].Group = gatewayv1.Group(g) }
}

func fromNamespace(ns string) grantOption {
	return func(s *gatewayv1.ReferenceGrantSpec) { s.From[0].Namespace = gatewayv1.Namespace(ns) }
}

func toKind(k string) grantOption {
	return func(s *gatewayv1.ReferenceGrantSpec) { s.To[0].Kind = gatewayv1.Kind(k) }
}

func toAnyName() grantOption {
	return func(s *gatewayv1.ReferenceGrantSpec) { s.To[0].Name = nil }
}

func noTo() grantOption {
	return func(s *gatewayv1.ReferenceGrantSpec) { s.To = nil }
}

func TestValidateSpec(t *testing.T) {
	tests := map[string]struct {
		spec    gatewayv1.ReferenceGrantSpec
		wantErr string // substring of the joined errors; empty means valid
	}{
		"Story 1's grant with the group snapshot.storage.k8s.io is valid": {
			spec: newGrantSpec(),
		},
		"grant without name allows every snapshot in the namespace and is valid": {
			spec: newGrantSpec(toAnyName()),
		},
		"the KEP's group snapshot.storage.k8s.io/v1 is rejected": {
			spec:    newGrantSpec(toGroup("snapshot.storage.k8s.io/v1")),
			wantErr: `spec.to[0].group: Invalid value: "snapshot.storage.k8s.io/v1": contains a version`,
		},
		"a version in the from group is rejected too": {
			spec:    newGrantSpec(fromGroup("core/v1")),
			wantErr: `spec.from[0].group: Invalid value: "core/v1"`,
		},
		"an upper-case group is rejected": {
			spec:    newGrantSpec(toGroup("Snapshot.Storage.k8s.io")),
			wantErr: `spec.to[0].group`,
		},
		"a from namespace that is not a DNS label is rejected": {
			spec:    newGrantSpec(fromNamespace("Test")),
			wantErr: `spec.from[0].namespace: Invalid value: "Test"`,
		},
		"a kind with a dot is rejected": {
			spec:    newGrantSpec(toKind("VolumeSnapshot.v1")),
			wantErr: `spec.to[0].kind: Invalid value: "VolumeSnapshot.v1"`,
		},
		"a grant without a to entry is rejected": {
			spec:    newGrantSpec(noTo()),
			wantErr: "spec.to: Invalid value: 0: must have 1 to 16 entries",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := ValidateSpec(tc.spec).ToAggregate()
			if (err != nil) != (tc.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("ValidateSpec() = %v, want an error containing %q (none if empty)", err, tc.wantErr)
			}
		})
	}
}
