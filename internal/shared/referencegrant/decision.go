package referencegrant

// Reason says why a Decision was made; it is stable and fit for metrics
// labels and event reasons.
type Reason string

const (
	// ReasonAllowed means a ReferenceGrant allows the reference.
	ReasonAllowed Reason = "Allowed"
	// ReasonNotGranted means no ReferenceGrant allows the reference.
	ReasonNotGranted Reason = "NotGranted"
	// ReasonUnavailable means ReferenceGrants cannot be read: the API is not
	// served, the sidecar may not list it, or the cache has not synced.
	// Callers retry later rather than treat the reference as refused for
	// good.
	ReasonUnavailable Reason = "Unavailable"
)

// Decision is the answer to whether a reference is allowed.
type Decision struct {
	// Allowed is true only when Reason is ReasonAllowed.
	Allowed bool
	// Reason classifies the decision.
	Reason Reason
	// Grant is the namespace/name of the ReferenceGrant that allows the
	// reference, if any.
	Grant string
	// Message is user-facing text for an event on the referring object; it
	// says exactly what is missing when the reference is not allowed.
	Message string
}

// Decide decides ref against grants. It does not filter grants by index
// key: any grant may be passed, and Allows rejects those that do not apply.
// When several grants allow ref, the one with the lowest name is reported,
// so repeated decisions read the same.
//
// Decide does not treat same-namespace references specially: whether such a
// reference needs a grant at all is the caller's decision.
func Decide(grants []Grant, ref Reference) Decision {
	var allowing *Grant
	for i := range grants {
		allowing = preferred(allowing, &grants[i], ref)
	}
	return decision(ref, allowing)
}

// preferred returns candidate if it allows ref and is preferred to the
// allowing grant found so far, else that grant (which may be nil).
func preferred(allowing, candidate *Grant, ref Reference) *Grant {
	if Allows(*candidate, ref) && (allowing == nil || candidate.Name < allowing.Name) {
		return candidate
	}
	return allowing
}

// decision is the decision for ref given the grant that allows it, if any.
func decision(ref Reference, allowing *Grant) Decision {
	if allowing == nil {
		return Decision{Reason: ReasonNotGranted, Message: notGrantedMessage(ref)}
	}
	return Decision{
		Allowed: true,
		Reason:  ReasonAllowed,
		Grant:   allowing.Namespace + "/" + allowing.Name,
		Message: allowedMessage(allowing, ref),
	}
}

// unavailable is the decision when grants cannot be read; err says why.
func unavailable(ref Reference, err error) Decision {
	return Decision{Reason: ReasonUnavailable, Message: unavailableMessage(ref, err)}
}
