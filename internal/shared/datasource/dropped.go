package datasource

import (
	"bytes"

	v1 "k8s.io/api/core/v1"
)

// dataSourceRefField is how a managed-fields entry records that its
// manager set spec.dataSourceRef.
var dataSourceRefField = []byte(`"f:dataSourceRef"`)

// RefDropped reports whether the API server dropped the claim's
// spec.dataSourceRef: the claim has none, yet a manager's entry in its
// managed fields says it was set. kube-apiserver without the alpha gate
// CrossNamespaceVolumeDataSource (every managed cluster) drops a
// dataSourceRef that names a namespace, whole, after the field manager has
// recorded it; dataSourceRef is immutable, so nothing else removes it. Such
// a claim asked for data: provisioned, it would get an empty volume.
func RefDropped(claim *v1.PersistentVolumeClaim) bool {
	if claim.Spec.DataSourceRef != nil || claim.Spec.DataSource != nil {
		return false
	}
	for _, m := range claim.ManagedFields {
		if m.FieldsV1 != nil && bytes.Contains(m.FieldsV1.Raw, dataSourceRefField) {
			return true
		}
	}
	return false
}
