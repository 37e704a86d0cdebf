package cachetrim

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// ClaimSource is the claim informer's transform of a component that only
// decides on claims' data sources (claimsource.Admit) and reports on them
// with events, and never writes a claim back, such as the
// volume-data-source-validator. A claim keeps its identity, data source
// fields, bound volume and phase; managed fields only when they are all
// that says the API server dropped its dataSourceRef (datasource.RefDropped).
// Labels, annotations, size, access modes and the rest go. Any other
// object is trimmed as by Meta.
func ClaimSource(obj any) (any, error) {
	claim, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok {
		return Meta(obj)
	}
	var managed []metav1.ManagedFieldsEntry
	if datasource.RefDropped(claim) {
		managed = claim.ManagedFields
	}
	claim.ObjectMeta = identity(claim.ObjectMeta)
	claim.ManagedFields = managed
	claim.Spec = v1.PersistentVolumeClaimSpec{
		VolumeName: claim.Spec.VolumeName, DataSource: claim.Spec.DataSource, DataSourceRef: claim.Spec.DataSourceRef,
	}
	claim.Status = v1.PersistentVolumeClaimStatus{Phase: claim.Status.Phase}
	return claim, nil
}
