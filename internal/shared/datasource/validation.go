package datasource

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateGroup checks the spelling of an API group in a reference: "" (the
// core group) or a DNS-1123 subdomain, never with a version. KEP-3294's
// examples write "snapshot.storage.k8s.io/v1"; the API server refuses that
// in a claim and the ReferenceGrant CRD refuses it in a grant, so the error
// says what to write instead.
func ValidateGroup(path *field.Path, group string) field.ErrorList {
	if group == "" {
		return nil
	}
	if i := strings.Index(group, "/"); i >= 0 {
		return field.ErrorList{field.Invalid(path, group,
			`contains a version; use the API group alone, e.g. "`+group[:i]+`"`)}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(group) {
		errs = append(errs, field.Invalid(path, group, msg))
	}
	return errs
}

// ValidateClaimSources checks the data source fields of a claim spec as far
// as this project's rules go: API groups spelled as ValidateGroup wants, a
// kind and name set, and a namespace that is empty or a DNS-1123 label. The API
// server accepts some of what this refuses (a group with a version), but no
// controller would act on such a claim: it would wait forever.
func ValidateClaimSources(spec v1.PersistentVolumeClaimSpec) field.ErrorList {
	var errs field.ErrorList
	if ds := spec.DataSource; ds != nil {
		errs = append(errs, validateReference(field.NewPath("spec", "dataSource"), ds.APIGroup, ds.Kind, ds.Name)...)
	}
	if ref := spec.DataSourceRef; ref != nil {
		path := field.NewPath("spec", "dataSourceRef")
		errs = append(errs, validateReference(path, ref.APIGroup, ref.Kind, ref.Name)...)
		// An empty namespace is the claim's own, as kube-apiserver (which
		// checks only a non-empty one) and Resolve read it.
		if ref.Namespace != nil && *ref.Namespace != "" {
			for _, msg := range validation.IsDNS1123Label(*ref.Namespace) {
				errs = append(errs, field.Invalid(path.Child("namespace"), *ref.Namespace, msg))
			}
		}
	}
	return errs
}

func validateReference(path *field.Path, group *string, kind, name string) field.ErrorList {
	var errs field.ErrorList
	if group != nil {
		errs = append(errs, ValidateGroup(path.Child("apiGroup"), *group)...)
	}
	if kind == "" {
		errs = append(errs, field.Required(path.Child("kind"), ""))
	}
	if name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	}
	return errs
}
