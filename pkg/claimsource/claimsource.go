// Package claimsource is the one decision about whether this provisioner
// may use a claim's data source: provision from it, leave the claim to
// another component, or refuse it and say why. Provisioning, the filter that
// runs before it and source protection all ask this package, so that "this
// claim uses that source" means the same thing everywhere.
//
// Decide is pure. Policy gathers its input (the feature gate and a grant
// decision from the cache) and calls it.
package claimsource

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/xns-csi/csi-provisioner/pkg/datasource"
	"github.com/xns-csi/csi-provisioner/pkg/referencegrant"
)

// Action is what the provisioner does with a claim's source.
type Action int

const (
	// Provision means the claim may be provisioned from its source, once
	// the source itself is usable (snapshot ready, clone source bound).
	Provision Action = iota
	// LeaveAlone means the claim is not this provisioner's to provision:
	// a volume populator fills it, or cross-namespace sources are off.
	LeaveAlone
	// Refuse means the claim cannot be provisioned from its source until
	// something changes (a grant appears, the grant cache can be read).
	Refuse
)

// Event reasons of the decision, also its verdicts' Reason.
const (
	// ReasonAllowed: the claim may use its source.
	ReasonAllowed = "Allowed"
	// ReasonCrossNamespaceDisabled: the claim names another namespace but
	// the CrossNamespaceSourceProvisioning feature gate is off.
	ReasonCrossNamespaceDisabled = "CrossNamespaceSourceDisabled"
	// ReasonCrossNamespaceKindUnsupported: only VolumeSnapshots can be
	// used across namespaces (KEP-3294).
	ReasonCrossNamespaceKindUnsupported = "CrossNamespaceKindUnsupported"
	// ReasonWaitingForPopulator: the source is a volume populator's kind.
	ReasonWaitingForPopulator = "WaitingForPopulator"
)

// Input is everything Decide reads.
type Input struct {
	// Source is the claim's resolved data source.
	Source datasource.Source
	// CrossNamespace is the CrossNamespaceSourceProvisioning feature gate.
	CrossNamespace bool
	// Grant is the ReferenceGrant decision for the claim's reference; it is
	// read only when Source.NeedsGrant().
	Grant referencegrant.Decision
}

// Verdict is the outcome of Decide.
type Verdict struct {
	// Action is what to do with the claim.
	Action Action
	// Reason is a CamelCase cause, the event reason of a refusal.
	Reason string
	// Message tells the claim's owner what is missing.
	Message string
}

// Decide runs the chain gate → kind → grant. It does not look at the
// source object itself: snapshotsource and clonesource do, once Decide
// allows the claim.
func Decide(in Input) Verdict {
	src := in.Source
	switch {
	case src.Type() == datasource.Populator:
		return Verdict{Action: LeaveAlone, Reason: ReasonWaitingForPopulator, Message: fmt.Sprintf(
			"the data source %s is not a VolumeSnapshot or PersistentVolumeClaim; waiting for its volume populator to fill the volume", src)}
	case !src.NeedsGrant():
		return Verdict{Action: Provision, Reason: ReasonAllowed}
	case !in.CrossNamespace:
		return Verdict{Action: LeaveAlone, Reason: ReasonCrossNamespaceDisabled, Message: fmt.Sprintf(
			"spec.dataSourceRef.namespace names %s, but the provisioner's CrossNamespaceSourceProvisioning feature gate is off; the claim is not provisioned", src)}
	case src.Type() != datasource.Snapshot:
		return Verdict{Action: Refuse, Reason: ReasonCrossNamespaceKindUnsupported, Message: fmt.Sprintf(
			"%s: only VolumeSnapshots can be used across namespaces (KEP-3294); clone the claim within its namespace instead", src)}
	case !in.Grant.Allowed:
		return Verdict{Action: Refuse, Reason: string(in.Grant.Reason), Message: in.Grant.Message}
	}
	return Verdict{Action: Provision, Reason: ReasonAllowed, Message: in.Grant.Message}
}

// HoldsSource reports whether a pending claim with this verdict keeps its
// source protected from deletion: it will be provisioned from it, or the
// grant cache cannot tell now (fail safe: keep the data). A claim refused
// for good, or whose grant is missing, does not, so that nobody can keep
// another namespace's snapshot from being deleted by naming it.
func (v Verdict) HoldsSource() bool {
	return v.Action == Provision || v.Reason == string(referencegrant.ReasonUnavailable)
}

// GrantChecker decides from a cache whether a ReferenceGrant allows a
// reference.
type GrantChecker interface {
	Check(ref referencegrant.Reference) referencegrant.Decision
}

// Policy gathers Decide's input for a claim from the sidecar's settings and
// caches.
type Policy struct {
	// CrossNamespace is the CrossNamespaceSourceProvisioning feature gate.
	CrossNamespace bool
	// Grants checks ReferenceGrants from a cache.
	Grants GrantChecker
}

// Decide resolves the claim's source and decides it. A claim whose source
// fields cannot be resolved returns the resolution error.
func (p Policy) Decide(claim *v1.PersistentVolumeClaim) (datasource.Source, Verdict, error) {
	src, err := datasource.Resolve(claim)
	if err != nil {
		return src, Verdict{}, err
	}
	in := Input{Source: src, CrossNamespace: p.CrossNamespace}
	if src.NeedsGrant() {
		in.Grant = p.Grants.Check(referencegrant.ClaimReference(claim.Namespace, src.APIGroup, src.Kind, src.Namespace, src.Name))
	}
	return src, Decide(in), nil
}
