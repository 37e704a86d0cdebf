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
	// ErrForbidden means the API server refused to list the resource,
	// usually because an RBAC rule is missing.
	ErrForbidden = errors.New("forbidden")
	// ErrNotSynced means the informer has not finished its first list yet.
	ErrNotSynced = errors.New("cache not synced yet")
)

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
	// synced is true once the informer has synced, and false again once the
	// API server refuses it (see revokes) until its replacement has synced.
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
	case apierrors.IsForbidden(s.listErr):
		return fmt.Errorf("cannot list %s: %w: grant get, list and watch on %s to this sidecar's ServiceAccount (%w)",
			c, ErrForbidden, c.groupResource(), s.listErr)
	case apierrors.IsUnauthorized(s.listErr):
		return fmt.Errorf("cannot list %s: %w: the API server does not accept this sidecar's credentials (%w)",
			c, ErrForbidden, s.listErr)
	case apierrors.IsNotFound(s.listErr):
		// The CRD was removed after discovery found it.
		return notServed(name, c.String())
	case s.listErr != nil:
		return fmt.Errorf("%s API (%s): %w: last list error: %w", name, c, ErrNotSynced, s.listErr)
	default:
		return fmt.Errorf("%s API (%s): %w", name, c, ErrNotSynced)
	}
}

// revokes reports whether a list or watch error means the API server no
// longer lets the sidecar see the resource, so that a synced cache can no
// longer follow changes: a permission withdrawn, credentials refused, or the
// version no longer served.
func revokes(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err)
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
