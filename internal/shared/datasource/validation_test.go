package datasource

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// newClaimSpec returns a claim spec whose dataSourceRef names the snapshot
// prod/foo-backup in apiGroup.
func newClaimSpec(apiGroup string) v1.PersistentVolumeClaimSpec {
	namespace := "prod"
	return v1.PersistentVolumeClaimSpec{DataSourceRef: &v1.TypedObjectReference{
		APIGroup: &apiGroup, Kind: "VolumeSnapshot", Name: "foo-backup", Namespace: &namespace,
	}}
}

func TestValidateClaimSources(t *testing.T) {
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
			wantErr: `spec.dataSourceRef.apiGroup: Invalid value: "snapshot.storage.k8s.io/v1": contains a version`,
		},
		"an empty dataSourceRef.namespace is the claim's own, as the API server reads it": {
			spec: func() v1.PersistentVolumeClaimSpec {
				s := newClaimSpec("snapshot.storage.k8s.io")
				s.DataSourceRef.Namespace = new(string)
				return s
			}(),
		},
		"a dataSourceRef.namespace that is not a DNS label is rejected": {
			spec: func() v1.PersistentVolumeClaimSpec {
				s := newClaimSpec("snapshot.storage.k8s.io")
				ns := "Prod"
				s.DataSourceRef.Namespace = &ns
				return s
			}(),
			wantErr: `spec.dataSourceRef.namespace`,
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
			err := ValidateClaimSources(tc.spec).ToAggregate()
			if (err != nil) != (tc.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("ValidateClaimSources() = %v, want an error containing %q (none if empty)", err, tc.wantErr)
			}
		})
	}
}
