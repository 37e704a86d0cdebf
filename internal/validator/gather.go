package validator

import (
	v1 "k8s.io/api/core/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
)

// Registry tells whether a VolumePopulator registers a data source kind.
type Registry interface {
	// Registered reports whether a VolumePopulator registers group and
	// kind; the error says why the VolumePopulators cannot be read.
	Registered(group, kind string) (bool, error)
}

// cacheState says why an optional cache cannot be read (see
// optionalapi.API.Informer); nil once it can.
type cacheState interface {
	Err() error
}

// gatherer reads Decide's input for a claim from the caches. It reads
// caches only: zero API calls per claim.
type gatherer struct {
	// policy is the sidecar's claim-source policy over the validator's
	// grant and link caches.
	policy     claimsource.Policy
	populators Registry
	grants     cacheState
	// links is nil when the validator does not restore through
	// VolumeSnapshotLinks (policy.SnapshotLinks is off).
	links cacheState
}

// gather returns Decide's input for claim.
func (g gatherer) gather(claim *v1.PersistentVolumeClaim) Input {
	in := Input{Claim: claim}
	if claim.Spec.VolumeName != "" || claim.DeletionTimestamp != nil {
		return in // Decide reads nothing else of a bound claim
	}
	in.Source, in.Verdict, in.Invalid = g.policy.Admit(claim)
	if in.Invalid == nil && in.Verdict.Reason == claimsource.ReasonWaitingForPopulator {
		in.Registered, in.PopulatorsErr = g.populators.Registered(in.Source.APIGroup, in.Source.Kind)
	}
	// The caches' states are read after the verdict: a cache that finished
	// syncing in between says it can be read, and Decide waits for the
	// claim to be re-queued by that sync (unreadable).
	in.GrantsErr = g.grants.Err()
	if g.links != nil {
		in.LinksErr = g.links.Err()
	}
	return in
}
