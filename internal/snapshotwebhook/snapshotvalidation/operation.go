package snapshotvalidation

import "k8s.io/apimachinery/pkg/util/validation/field"

// Operation is the operation of an admission request. Its values are those
// of admission.k8s.io/v1's Operation, so the webhook converts one into the
// other.
type Operation string

// The operations of admission requests.
const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT"
)

// ratchet is the seed's backwards-compatibility rule, the same for every
// object: on CREATE the object must pass strict; on UPDATE it must keep
// the immutable fields of the old object, and pass strict only when the old
// object passes it too. Every other operation is allowed.
func ratchet[T any](op Operation, obj, old T, strict func(T) field.ErrorList, immutable func(obj, old T) field.ErrorList) field.ErrorList {
	switch op {
	case Create:
		return strict(obj)
	case Update:
		errs := immutable(obj, old)
		if len(strict(old)) == 0 {
			errs = append(errs, strict(obj)...)
		}
		return errs
	default:
		return nil
	}
}

// exactlyOne checks a oneOf of optional fields: exactly one of them must
// be present. An empty string counts as present, as CEL's has() counts it
// in the CRDs of external-snapshotter v8.
func exactlyOne(path *field.Path, names [2]string, values [2]*string) field.ErrorList {
	switch {
	case values[0] == nil && values[1] == nil:
		return field.ErrorList{field.Required(path, "exactly one of "+names[0]+" and "+names[1]+" must be set")}
	case values[0] != nil && values[1] != nil:
		return field.ErrorList{field.Forbidden(path, "exactly one of "+names[0]+" and "+names[1]+" must be set, not both")}
	default:
		return nil
	}
}

// immutableString reports a change of an optional string field.
func immutableString(path *field.Path, value, old *string) field.ErrorList {
	if equalPtr(value, old) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, value, "field is immutable (was "+display(old)+")")}
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// display shows an optional string in a message.
func display[T ~string](s *T) string {
	if s == nil {
		return "<unset>"
	}
	return `"` + string(*s) + `"`
}
