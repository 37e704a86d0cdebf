package referencegrant

import (
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// kindPattern is the ReferenceGrant CRD's pattern for a kind
// (sigs.k8s.io/gateway-api/apis/v1 Kind).
var kindPattern = regexp.MustCompile(`^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$`)

// ValidateSpec checks a ReferenceGrant spec the way the Gateway API CRD's
// OpenAPI schema does: 1 to 16 from and to entries, groups spelled as
// datasource.ValidateGroup wants (so the KEP-3294 example's
// "snapshot.storage.k8s.io/v1" is refused, as a real cluster refuses it),
// kinds matching the CRD's pattern, from namespaces that are DNS labels and
// to names of 1 to 253 characters. Manifests, and later the webhook and the
// validator, check grants with it before a cluster does.
func ValidateSpec(spec gatewayv1.ReferenceGrantSpec) field.ErrorList {
	var errs field.ErrorList
	specPath := field.NewPath("spec")
	if n := len(spec.From); n < 1 || n > 16 {
		errs = append(errs, field.Invalid(specPath.Child("from"), n, "must have 1 to 16 entries"))
	}
	if n := len(spec.To); n < 1 || n > 16 {
		errs = append(errs, field.Invalid(specPath.Child("to"), n, "must have 1 to 16 entries"))
	}
	for i, from := range spec.From {
		path := specPath.Child("from").Index(i)
		errs = append(errs, datasource.ValidateGroup(path.Child("group"), string(from.Group))...)
		errs = append(errs, validateKind(path.Child("kind"), string(from.Kind))...)
		for _, msg := range validation.IsDNS1123Label(string(from.Namespace)) {
			errs = append(errs, field.Invalid(path.Child("namespace"), from.Namespace, msg))
		}
	}
	for i, to := range spec.To {
		path := specPath.Child("to").Index(i)
		errs = append(errs, datasource.ValidateGroup(path.Child("group"), string(to.Group))...)
		errs = append(errs, validateKind(path.Child("kind"), string(to.Kind))...)
		if to.Name != nil && (len(*to.Name) < 1 || len(*to.Name) > 253) {
			errs = append(errs, field.Invalid(path.Child("name"), *to.Name, "must be 1 to 253 characters"))
		}
	}
	return errs
}

func validateKind(path *field.Path, kind string) field.ErrorList {
	if len(kind) < 1 || len(kind) > 63 || !kindPattern.MatchString(kind) {
		return field.ErrorList{field.Invalid(path, kind, "must be 1 to 63 letters, digits and dashes, starting with a letter")}
	}
	return nil
}
