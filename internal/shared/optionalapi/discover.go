package optionalapi

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
)

// servedCandidate returns the index of the first candidate the API server
// serves, or -1 if it serves none. A group/version that is served without the
// candidate's resource does not count: older Gateway API installs serve
// gateway.networking.k8s.io/v1 for Gateways but ReferenceGrants only as
// v1beta1.
func servedCandidate(ctx context.Context, disc discovery.DiscoveryInterfaceWithContext, candidates []Candidate) (int, error) {
	for i, c := range candidates {
		resources, err := disc.ServerResourcesForGroupVersionWithContext(ctx, c.GroupVersion.String())
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			// Do not fall back to a less preferred candidate on a transient
			// error: the choice is kept for the life of the process.
			return -1, fmt.Errorf("discovering %s: %w", c.GroupVersion, err)
		}
		for _, r := range resources.APIResources {
			if r.Name == c.Resource {
				return i, nil
			}
		}
	}
	return -1, nil
}
