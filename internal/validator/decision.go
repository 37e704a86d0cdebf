package validator

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// Action is what the validator does about a claim.
type Action int

const (
	// Quiet means no event. The claim is bound, its source is fine, or another
	// component (a registered populator) reports on it.
	Quiet Action = iota
	// Warn means a Warning event with Outcome's reason and message, once per
	// claim and state.
	Warn
	// Wait means no decision until a cache the decision needs has synced; the
	// claim is re-queued when it has.
	Wait
)

// Input is everything Decide reads about one claim, gathered from the
// caches (see gather).
type Input struct {
	// Claim is the claim; Decide reads only whether it is bound or being
	// deleted.
	Claim *v1.PersistentVolumeClaim
	// Source is the claim's resolved data source; Invalid says why its
	// fields cannot be resolved (then Verdict is empty).
	Source  datasource.Source
	Invalid error
	// Verdict is the sidecar's claim-level decision, claimsource.Admit.
	Verdict claimsource.Verdict
	// Registered: a VolumePopulator registers Source's group and kind.
	// PopulatorsErr says why the VolumePopulators cannot be read.
	Registered    bool
	PopulatorsErr error
	// GrantsErr and LinksErr say why the ReferenceGrant and
	// VolumeSnapshotLink caches cannot be read; nil when they can (or, for
	// links, when the validator does not restore through them).
	GrantsErr, LinksErr error
}

// Outcome is the validator's decision about one claim.
type Outcome struct {
	Action Action
	// Reason is the event's reason when Action is Warn, and says why there
	// is no event otherwise (for logs).
	Reason string
	// Message is the event's message.
	Message string
	// Cause is what Message leaves to the log: why one of the validator's
	// own caches cannot be read, in the API server's words. Never in an
	// event.
	Cause error
}

// Decide decides whether a claim gets an event, and which:
//
//   - a bound claim, or one being deleted, never does;
//   - a claim whose source fields cannot be resolved gets InvalidDataSource;
//   - a claim the sidecar's decision admits (no source, a snapshot or
//     clone in its namespace, a grant that allows the other namespace's)
//     gets none;
//   - a claim the decision leaves to a volume populator gets none when a
//     VolumePopulator registers its kind, UnrecognizedDataSourceKind when
//     none does, and waits while the VolumePopulators cannot be read (no
//     CRD, no permission, not synced): unknown is not unrecognized;
//   - a grant or link cache that cannot be read is the validator's own:
//     the event has the verdict's reason and a message that says why in
//     the validator's words (cannotRead), and only when the cache's state
//     says why (unreadable); the claim waits otherwise;
//   - every other verdict (a missing grant, a dropped dataSourceRef, a
//     missing VolumeSnapshotLink, ...) is the event, with the verdict's
//     reason and message.
func Decide(in Input) Outcome {
	switch {
	case in.Claim.Spec.VolumeName != "" || in.Claim.DeletionTimestamp != nil:
		return Outcome{Action: Quiet, Reason: quietBound}
	case in.Invalid != nil:
		return Outcome{Action: Warn, Reason: ReasonInvalidDataSource, Message: in.Invalid.Error()}
	case in.Verdict.Action == claimsource.Provision:
		return Outcome{Action: Quiet, Reason: quietAllowed}
	case in.Verdict.Reason == claimsource.ReasonWaitingForPopulator:
		return decidePopulator(in)
	case in.Verdict.Reason == claimsource.ReasonGrantUnavailable && !unreadable(in.GrantsErr):
		return Outcome{Action: Wait, Reason: waitGrants, Message: in.Verdict.Message}
	case in.Verdict.Reason == claimsource.ReasonLinkAPIUnavailable && !unreadable(in.LinksErr):
		return Outcome{Action: Wait, Reason: waitLinks, Message: in.Verdict.Message}
	case in.Verdict.Reason == claimsource.ReasonGrantUnavailable:
		return Outcome{Action: Warn, Reason: string(in.Verdict.Reason), Cause: in.GrantsErr, Message: cannotRead(
			fmt.Sprintf("tell whether a ReferenceGrant allows this claim's data source, %s", in.Source), "ReferenceGrant", in.GrantsErr)}
	case in.Verdict.Reason == claimsource.ReasonLinkAPIUnavailable:
		return Outcome{Action: Warn, Reason: string(in.Verdict.Reason), Cause: in.LinksErr, Message: cannotRead(
			fmt.Sprintf("read %s, this claim's data source", in.Source), snapv1alpha1.Kind, in.LinksErr)}
	}
	return Outcome{Action: Warn, Reason: string(in.Verdict.Reason), Message: in.Verdict.Message}
}

// unreadable reports whether a cache's state, read after the verdict, says
// that it cannot be read for a reason worth telling (not served,
// forbidden). A cache still syncing is not: its sync re-queues the claim.
// Neither is one that can be read: an unavailable verdict then came from
// the cache as it was before its sync completed (the verdict is read
// first), and the sync re-queues the claim to be decided on the synced
// cache (optionalapi announces a sync after its state says synced).
func unreadable(err error) bool {
	return err != nil && !errors.Is(err, optionalapi.ErrNotSynced)
}

// cannotRead is the message of a claim whose decision needs a cache of
// the validator's that cannot be read (err, unreadable) holding objects of
// kind: "The volume-data-source-validator cannot <what>: <why>". It names
// the validator, whose CRD or RBAC is missing, rather than the sidecar that
// the verdict's own message speaks for, and leaves the API server's error,
// with the validator's ServiceAccount, to the validator's log and /readyz:
// the claim's owner reads the event (issue 22, defect 7).
func cannotRead(what, kind string, err error) string {
	why := fmt.Sprintf("it cannot read %ss (its log says why)", kind)
	switch {
	case errors.Is(err, optionalapi.ErrNotServed):
		why = fmt.Sprintf("the %s API is not served in this cluster; is the CRD installed?", kind)
	case errors.Is(err, optionalapi.ErrForbidden):
		why = fmt.Sprintf("the API server does not let it read %ss: the validator's own permission is missing, not the csi-provisioner's "+
			"(its log has the details for a cluster administrator)", kind)
	}
	return "The " + Component + " cannot " + what + ": " + why
}

// decidePopulator decides a claim whose source is a volume populator's kind.
func decidePopulator(in Input) Outcome {
	switch {
	case in.PopulatorsErr != nil:
		return Outcome{Action: Wait, Reason: waitPopulators, Message: in.PopulatorsErr.Error()}
	case in.Registered:
		return Outcome{Action: Quiet, Reason: quietRegistered}
	}
	src := in.Source
	// The first sentence is upstream's message, word for word.
	return Outcome{Action: Warn, Reason: ReasonUnrecognizedDataSourceKind, Message: fmt.Sprintf(
		"The datasource for this PVC does not match any registered VolumePopulator: no VolumePopulator registers kind %q "+
			"of API group %q (spec.dataSourceRef names %s). Install the volume populator of that kind, which registers it, "+
			"or fix the apiGroup and kind if they are misspelled; until then nothing fills the claim and it stays Pending",
		src.Kind, src.APIGroup, src)}
}

// String names the action for logs.
func (a Action) String() string {
	switch a {
	case Quiet:
		return "Quiet"
	case Warn:
		return "Warn"
	case Wait:
		return "Wait"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}
