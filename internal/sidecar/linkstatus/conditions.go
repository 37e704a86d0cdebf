// Package linkstatus keeps the status of VolumeSnapshotLinks: whether the
// VolumeSnapshot a link names exists (Resolved) and whether a
// ReferenceGrant lets the link use it (Allowed), so `kubectl get
// volumesnapshotlinks` shows at a glance why a restore waits.
//
// A link tells only what it may use: across namespaces, until a grant
// allows the link, Resolved is Unknown whatever the snapshot's state, so
// that links are no oracle for the snapshots of a namespace that did not
// allow them (issue 21; the claim path refuses such a claim before it
// looks at the snapshot, too).
//
// Conditions is pure; the Controller writes the status subresource when a
// link, its snapshot or a grant in the snapshot's namespace changes, and
// only when a condition's status, reason or message changed.
package linkstatus

import (
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// Input is what the conditions of a link are computed from.
type Input struct {
	// Link is the VolumeSnapshotLink.
	Link *snapv1alpha1.VolumeSnapshotLink
	// Snapshot is the VolumeSnapshot it names, nil when absent;
	// SnapshotUnreadable says why the snapshot cache cannot be read. Both
	// are read only when the link may use the snapshot (it is in the
	// link's namespace, or Grant allows it).
	Snapshot           *snapv1.VolumeSnapshot
	SnapshotUnreadable error
	// Grant is the decision for the link's reference; read only when the
	// snapshot is in another namespace.
	Grant referencegrant.Decision
}

// Conditions returns the link's Resolved and Allowed conditions (without
// transition times, which meta.SetStatusCondition keeps). A link that may
// not use its snapshot (Allowed is not True) gets a Resolved that is the
// same whatever the snapshot's state: Unknown, with Allowed's reason.
func Conditions(in Input) []metav1.Condition {
	target := claimsource.LinkTarget(in.Link)
	allowed := allowedCondition(in, target)
	if allowed.Status != metav1.ConditionTrue {
		return []metav1.Condition{withheld(target, claimsource.Reason(allowed.Reason)), allowed}
	}
	resolved := condition(snapv1alpha1.ConditionResolved, metav1.ConditionTrue, claimsource.ReasonSnapshotFound, target.String()+" exists")
	switch {
	case in.SnapshotUnreadable != nil:
		resolved = condition(snapv1alpha1.ConditionResolved, metav1.ConditionUnknown, claimsource.ReasonSnapshotAPIUnavailable,
			"cannot read "+target.String()+": "+in.SnapshotUnreadable.Error())
	case in.Snapshot == nil:
		resolved = condition(snapv1alpha1.ConditionResolved, metav1.ConditionFalse, claimsource.ReasonSnapshotNotFound,
			target.String()+" does not exist")
	}
	return []metav1.Condition{resolved, allowed}
}

// allowedCondition is the link's Allowed condition: True in the
// snapshot's namespace or with a grant, False without one, Unknown when
// the grants cannot be checked.
func allowedCondition(in Input, target datasource.Source) metav1.Condition {
	switch {
	case target.Namespace == in.Link.Namespace:
		return condition(snapv1alpha1.ConditionAllowed, metav1.ConditionTrue, claimsource.ReasonSameNamespace,
			target.String()+" is in the link's namespace; no ReferenceGrant is needed")
	case in.Grant.Reason == referencegrant.ReasonUnavailable:
		return condition(snapv1alpha1.ConditionAllowed, metav1.ConditionUnknown, claimsource.ReasonGrantUnavailable, in.Grant.Message)
	case !in.Grant.Allowed:
		return condition(snapv1alpha1.ConditionAllowed, metav1.ConditionFalse, claimsource.ReasonGrantMissing, in.Grant.Message)
	}
	return condition(snapv1alpha1.ConditionAllowed, metav1.ConditionTrue, claimsource.ReasonGranted, in.Grant.Message)
}

// withheld is the Resolved condition of a link that may not use target:
// it names nothing but what the link's own spec says.
func withheld(target datasource.Source, reason claimsource.Reason) metav1.Condition {
	message := "whether " + target.String() + " exists is not shown until a ReferenceGrant in namespace " +
		target.Namespace + " allows the link to use it (see the Allowed condition)"
	if reason == claimsource.ReasonGrantUnavailable {
		message = "whether " + target.String() + " exists is not shown while ReferenceGrants cannot be checked (see the Allowed condition)"
	}
	return condition(snapv1alpha1.ConditionResolved, metav1.ConditionUnknown, reason, message)
}

func condition(kind string, status metav1.ConditionStatus, reason claimsource.Reason, message string) metav1.Condition {
	return metav1.Condition{Type: kind, Status: status, Reason: string(reason), Message: message}
}

// changed reports whether setting want on the link would change its
// status: another condition status, reason or message, or a new
// generation.
func changed(link *snapv1alpha1.VolumeSnapshotLink, want []metav1.Condition) bool {
	if link.Status.ObservedGeneration != link.Generation {
		return true
	}
	for _, w := range want {
		have := meta.FindStatusCondition(link.Status.Conditions, w.Type)
		if have == nil || have.Status != w.Status || have.Reason != w.Reason || have.Message != w.Message {
			return true
		}
	}
	return false
}
