// Package linkstatus keeps the status of VolumeSnapshotLinks: whether the
// VolumeSnapshot a link names exists (Resolved) and whether a
// ReferenceGrant lets the link use it (Allowed), so `kubectl get
// volumesnapshotlinks` shows at a glance why a restore waits.
//
// Conditions is pure; the Controller writes the status subresource when a
// link, its snapshot or a grant in the snapshot's namespace changes, and
// only when a condition's status, reason or message changed.
package linkstatus

import (
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/claimsource"
	"github.com/xns-csi/csi-provisioner/pkg/referencegrant"
)

// Input is what the conditions of a link are computed from.
type Input struct {
	// Link is the VolumeSnapshotLink.
	Link *snapv1alpha1.VolumeSnapshotLink
	// Snapshot is the VolumeSnapshot it names, nil when absent;
	// SnapshotUnreadable says why the snapshot cache cannot be read.
	Snapshot           *snapv1.VolumeSnapshot
	SnapshotUnreadable error
	// Grant is the decision for the link's reference; read only when the
	// snapshot is in another namespace.
	Grant referencegrant.Decision
}

// Conditions returns the link's Resolved and Allowed conditions (without
// transition times, which meta.SetStatusCondition keeps).
func Conditions(in Input) []metav1.Condition {
	target := claimsource.LinkTarget(in.Link)
	resolved := condition(snapv1alpha1.ConditionResolved, metav1.ConditionTrue, claimsource.ReasonSnapshotFound, target.String()+" exists")
	switch {
	case in.SnapshotUnreadable != nil:
		resolved = condition(snapv1alpha1.ConditionResolved, metav1.ConditionUnknown, claimsource.ReasonSnapshotAPIUnavailable,
			"cannot read "+target.String()+": "+in.SnapshotUnreadable.Error())
	case in.Snapshot == nil:
		resolved = condition(snapv1alpha1.ConditionResolved, metav1.ConditionFalse, claimsource.ReasonSnapshotNotFound,
			target.String()+" does not exist")
	}
	allowed := condition(snapv1alpha1.ConditionAllowed, metav1.ConditionTrue, claimsource.ReasonSameNamespace,
		target.String()+" is in the link's namespace; no ReferenceGrant is needed")
	switch {
	case target.Namespace == in.Link.Namespace:
	case in.Grant.Reason == referencegrant.ReasonUnavailable:
		allowed = condition(snapv1alpha1.ConditionAllowed, metav1.ConditionUnknown, claimsource.ReasonGrantUnavailable, in.Grant.Message)
	case !in.Grant.Allowed:
		allowed = condition(snapv1alpha1.ConditionAllowed, metav1.ConditionFalse, claimsource.ReasonGrantMissing, in.Grant.Message)
	default:
		allowed = condition(snapv1alpha1.ConditionAllowed, metav1.ConditionTrue, claimsource.ReasonGranted, in.Grant.Message)
	}
	return []metav1.Condition{resolved, allowed}
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
