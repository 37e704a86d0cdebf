package optionalapi

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Errors that Informer wraps, so callers can tell the cases apart with
// errors.Is; the wrapping error carries the user-facing explanation.
var (
	// ErrNotServed means no candidate version is served by the API server,
	// usually because its CRD is not installed.
	ErrNotServed = errors.New("not served by the API server")
	// ErrForbidden means the API server refused to list or watch the
	// resource, usually because an RBAC rule is missing, or refused the
	// sidecar's credentials.
	ErrForbidden = errors.New("forbidden")
	// ErrNotSynced means the informer has not finished its first list yet.
	ErrNotSynced = errors.New("cache not synced yet")
)

// State says in one word how usable an optional API is: the value of the
// sidecar's availability gauges (see API.Status). It follows from the error
// Informer returns.
type State string

// The states of an optional API.
const (
	// StateAvailable: the informer has synced, and the cache is read.
	StateAvailable State = "available"
	// StateNotServed: no candidate version is served (ErrNotServed),
	// usually because the CRD is not installed.
	StateNotServed State = "not_served"
	// StateForbidden: the API server refuses the list or watch, or the
	// sidecar's credentials (ErrForbidden).
	StateForbidden State = "forbidden"
	// StateNotSynced: discovery or the informer's first list has not
	// completed (ErrNotSynced), also while the list fails.
	StateNotSynced State = "not_synced"
	// StateFailed: discovery fails, or the informer could not be prepared.
	StateFailed State = "failed"
)

// States are every State, in a fixed order.
var States = []State{StateAvailable, StateNotServed, StateForbidden, StateNotSynced, StateFailed}

// stateOf is the State of an API whose Informer returns err.
func stateOf(err error) State {
	switch {
	case err == nil:
		return StateAvailable
	case errors.Is(err, ErrNotServed):
		return StateNotServed
	case errors.Is(err, ErrForbidden):
		return StateForbidden
	case errors.Is(err, ErrNotSynced):
		return StateNotSynced
	default:
		return StateFailed
	}
}

// Status is an optional API's name (Config.Name, e.g. "ReferenceGrant")
// and state.
type Status struct {
	Name  string
	State State
}

// status is what Run has learnt about the API so far. Its err method is the
// pure decision of what to tell the user.
type status struct {
	// discovered is true once one discovery round has completed.
	discovered bool
	// discoveryErr is the last discovery failure other than "not served".
	discoveryErr error
	// chosen is the index of the served candidate whose informer runs, or
	// -1 while none is served.
	chosen int
	// prepareErr is the error Config.Prepare returned, if any.
	prepareErr error
	// listErr is the last error the informer's reflector reported, until
	// the informer syncs.
	listErr error
	// refused is the last list or watch the API server refused, kept until
	// an informer has synced again.
	refused *refusal
	// synced is true once the informer has synced, and false again once the
	// API server refuses it or no longer serves it, until its replacement
	// has synced.
	synced bool
}

// err explains why the API cannot be used, or returns nil once it can.
func (s status) err(name string, candidates []Candidate) error {
	if s.synced {
		return nil
	}
	if s.chosen < 0 {
		switch {
		case s.discoveryErr != nil:
			return fmt.Errorf("cannot discover whether the %s API (%s) is served: %w",
				name, candidateList(candidates), s.discoveryErr)
		case !s.discovered:
			return fmt.Errorf("%s API (%s): %w: discovery has not completed",
				name, candidateList(candidates), ErrNotSynced)
		default:
			return notServed(name, candidateList(candidates))
		}
	}
	c := candidates[s.chosen]
	switch {
	case s.prepareErr != nil:
		return fmt.Errorf("%s API (%s): cannot prepare its informer: %w", name, c, s.prepareErr)
	case s.refused != nil:
		return s.refused.explain(c)
	case apierrors.IsNotFound(s.listErr):
		// The CRD was removed after discovery found it.
		return notServed(name, c.String())
	case s.listErr != nil:
		return fmt.Errorf("%s API (%s): %w: last list error: %w", name, c, ErrNotSynced, s.listErr)
	default:
		return fmt.Errorf("%s API (%s): %w", name, c, ErrNotSynced)
	}
}

// notServed is the message for an API whose CRD is missing.
func notServed(name, versions string) error {
	return fmt.Errorf("%s API (%s) is %w: is the CRD installed?", name, versions, ErrNotServed)
}

// candidateList names every candidate, e.g. "g/v1/rs or g/v1beta1/rs".
func candidateList(candidates []Candidate) string {
	names := make([]string, 0, len(candidates))
	for _, c := range candidates {
		names = append(names, c.String())
	}
	return strings.Join(names, " or ")
}
