package manifests

import (
	"errors"
	"fmt"
	"regexp"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// kindPattern is the ReferenceGrant CRD's pattern for a kind
// (sigs.k8s.io/gateway-api/apis/v1 Kind).
var kindPattern = regexp.MustCompile(`^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$`)

// validateGrantSpec checks spec the way the ReferenceGrant CRD's OpenAPI
// schema does. Its group rule is why the KEP-3294 example, which writes
// "group: snapshot.storage.k8s.io/v1", is refused by a real cluster: a
// group is empty (the core group) or a DNS-1123 subdomain, and never
// carries a version.
func validateGrantSpec(spec gatewayv1.ReferenceGrantSpec) []error {
	var errs []error
	if n := len(spec.From); n < 1 || n > 16 {
		errs = append(errs, fmt.Errorf("spec.from has %d entries, want 1 to 16", n))
	}
	if n := len(spec.To); n < 1 || n > 16 {
		errs = append(errs, fmt.Errorf("spec.to has %d entries, want 1 to 16", n))
	}
	for i, from := range spec.From {
		path := fmt.Sprintf("spec.from[%d]", i)
		errs = append(errs, validateGroup(path+".group", string(from.Group))...)
		errs = append(errs, validateKind(path+".kind", string(from.Kind))...)
		for _, msg := range validation.IsDNS1123Label(string(from.Namespace)) {
			errs = append(errs, fmt.Errorf("%s.namespace %q: %s", path, from.Namespace, msg))
		}
	}
	for i, to := range spec.To {
		path := fmt.Sprintf("spec.to[%d]", i)
		errs = append(errs, validateGroup(path+".group", string(to.Group))...)
		errs = append(errs, validateKind(path+".kind", string(to.Kind))...)
		if to.Name != nil && (len(*to.Name) < 1 || len(*to.Name) > 253) {
			errs = append(errs, fmt.Errorf("%s.name %q: must be 1 to 253 characters", path, *to.Name))
		}
	}
	return errs
}

// validateClaimDataSources checks the API groups of a claim's dataSource
// and dataSourceRef like validateGrantSpec does. Kubernetes does not refuse
// "snapshot.storage.k8s.io/v1" there, but no controller recognizes it as a
// VolumeSnapshot, so the claim would wait for a populator forever.
func validateClaimDataSources(spec v1.PersistentVolumeClaimSpec) []error {
	var errs []error
	if ds := spec.DataSource; ds != nil {
		errs = append(errs, validateReference("spec.dataSource", ds.APIGroup, ds.Kind, ds.Name)...)
	}
	if ref := spec.DataSourceRef; ref != nil {
		errs = append(errs, validateReference("spec.dataSourceRef", ref.APIGroup, ref.Kind, ref.Name)...)
		if ref.Namespace != nil {
			for _, msg := range validation.IsDNS1123Label(*ref.Namespace) {
				errs = append(errs, fmt.Errorf("spec.dataSourceRef.namespace %q: %s", *ref.Namespace, msg))
			}
		}
	}
	return errs
}

func validateReference(path string, apiGroup *string, kind, name string) []error {
	var errs []error
	if apiGroup != nil {
		errs = append(errs, validateGroup(path+".apiGroup", *apiGroup)...)
	}
	errs = append(errs, validateKind(path+".kind", kind)...)
	if name == "" {
		errs = append(errs, fmt.Errorf("%s.name: must not be empty", path))
	}
	return errs
}

// validateGroup accepts "" (the core group) and DNS-1123 subdomains, as the
// CRD's pattern for a group does.
func validateGroup(path, group string) []error {
	if group == "" {
		return nil
	}
	var errs []error
	for _, msg := range validation.IsDNS1123Subdomain(group) {
		errs = append(errs, fmt.Errorf("%s %q: %s", path, group, msg))
	}
	return errs
}

func validateKind(path, kind string) []error {
	if len(kind) < 1 || len(kind) > 63 || !kindPattern.MatchString(kind) {
		return []error{fmt.Errorf("%s %q: must be 1 to 63 letters, digits and dashes, starting with a letter", path, kind)}
	}
	return nil
}

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

func TestValidateGrantSpec(t *testing.T) {
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
			wantErr: `spec.to[0].group "snapshot.storage.k8s.io/v1"`,
		},
		"a version in the from group is rejected too": {
			spec:    newGrantSpec(fromGroup("core/v1")),
			wantErr: `spec.from[0].group "core/v1"`,
		},
		"an upper-case group is rejected": {
			spec:    newGrantSpec(toGroup("Snapshot.Storage.k8s.io")),
			wantErr: `spec.to[0].group`,
		},
		"a from namespace that is not a DNS label is rejected": {
			spec:    newGrantSpec(fromNamespace("Test")),
			wantErr: `spec.from[0].namespace "Test"`,
		},
		"a kind with a dot is rejected": {
			spec:    newGrantSpec(toKind("VolumeSnapshot.v1")),
			wantErr: `spec.to[0].kind "VolumeSnapshot.v1"`,
		},
		"a grant without a to entry is rejected": {
			spec:    newGrantSpec(noTo()),
			wantErr: "spec.to has 0 entries",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkErr(t, errors.Join(validateGrantSpec(tc.spec)...), tc.wantErr)
		})
	}
}

// newClaimSpec returns a claim spec whose dataSourceRef names the snapshot
// prod/foo-backup in apiGroup.
func newClaimSpec(apiGroup string) v1.PersistentVolumeClaimSpec {
	namespace := "prod"
	return v1.PersistentVolumeClaimSpec{DataSourceRef: &v1.TypedObjectReference{
		APIGroup: &apiGroup, Kind: "VolumeSnapshot", Name: "foo-backup", Namespace: &namespace,
	}}
}

func TestValidateClaimDataSources(t *testing.T) {
	tests := map[string]struct {
		spec    v1.PersistentVolumeClaimSpec
		wantErr string
	}{
		"a claim without a data source is valid": {
			spec: v1.PersistentVolumeClaimSpec{},
		},
		"a cross-namespace snapshot reference in snapshot.storage.k8s.io is valid": {
			spec: newClaimSpec("snapshot.storage.k8s.io"),
		},
		"the KEP's apiGroup snapshot.storage.k8s.io/v1 is rejected": {
			spec:    newClaimSpec("snapshot.storage.k8s.io/v1"),
			wantErr: `spec.dataSourceRef.apiGroup "snapshot.storage.k8s.io/v1"`,
		},
		"a legacy dataSource with a version in its apiGroup is rejected": {
			spec: v1.PersistentVolumeClaimSpec{DataSource: &v1.TypedLocalObjectReference{
				APIGroup: newClaimSpec("snapshot.storage.k8s.io/v1").DataSourceRef.APIGroup, Kind: "VolumeSnapshot", Name: "s",
			}},
			wantErr: `spec.dataSource.apiGroup`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkErr(t, errors.Join(validateClaimDataSources(tc.spec)...), tc.wantErr)
		})
	}
}
