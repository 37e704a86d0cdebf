package transfer

// The invariants the explorer (explore_test.go) checks: at the moment
// something happens (data destroyed, a step deleting data) and at
// quiescence (who owns each datum, whether a transfer that cannot go on
// says so, what is left behind).

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/transfer/match"
	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// The kinds of data in the backend.
const (
	dataSnapshot = "snapshot"
	dataVolume   = "volume"
)

// datum is a backend snapshot or volume, and what the history did to it.
type datum struct {
	kind   string
	handle string
	// policy is the deletionPolicy or reclaim policy its owner chose.
	policy string
	// source is the object that owned it at the start.
	source    storeKey
	sourceUID types.UID
	exists    bool
	// released is set once a user deleted an object that owned it (or
	// the namespace of one): from then on its deletion is what they
	// asked for.
	released bool
	// left is what held when the source began to be deleted.
	left *consent
}

// name is how a violation names the datum's kind: the kind of object the
// transfer moves.
func (d *datum) name() string {
	if d.kind == dataVolume {
		return "claim"
	}
	return "snapshot"
}

// consent is, when a source began to be deleted, which requests had both
// consents (the request not being deleted, a matching accept) and the
// namespace each accept was in.
type consent struct {
	by        string
	request   map[types.UID]bool
	accept    map[types.UID]bool
	namespace map[types.UID]types.UID
}

// consents is the consent of every request now, as match decides it.
func (w *world) consents() *consent {
	c := &consent{request: map[types.UID]bool{}, accept: map[types.UID]bool{}, namespace: map[types.UID]types.UID{}}
	for _, obj := range w.list(resRequests, "") {
		r := obj.(*transferv1alpha1.StorageTransferRequest)
		a := match.Decide(r, w.acceptsNaming(r)).Accept
		c.request[r.UID], c.accept[r.UID] = r.DeletionTimestamp == nil, a != nil
		if a != nil {
			if ns := w.get(storeKey{resNamespaces, "", a.Namespace}); ns != nil {
				c.namespace[r.UID] = metaOf(ns).GetUID()
			}
		}
	}
	return c
}

// acceptsNaming are the accepts that name r and are not being deleted.
func (w *world) acceptsNaming(r *transferv1alpha1.StorageTransferRequest) []*transferv1alpha1.StorageTransferAccept {
	var out []*transferv1alpha1.StorageTransferAccept
	for _, obj := range w.list(resAccepts, "") {
		a := obj.(*transferv1alpha1.StorageTransferAccept)
		if a.DeletionTimestamp == nil && a.Spec.SourceNamespace == r.Namespace && a.Spec.RequestName == r.Name {
			out = append(out, a)
		}
	}
	return out
}

func (w *world) datum(kind, handle string) *datum {
	for _, d := range w.data {
		if d.kind == kind && d.handle == handle {
			return d
		}
	}
	return nil
}

// destroy deletes a backend snapshot or volume: a violation unless a user
// deleted an object that owned it.
func (w *world) destroy(actor, kind, handle, why string) {
	d := w.datum(kind, handle)
	if d == nil || !d.exists {
		return
	}
	d.exists = false
	w.logf("%s deletes the backend %s %s (%s)", actor, kind, handle, why)
	if !d.released {
		w.violated(d.name()+"-data-destroyed", fmt.Sprintf("the backend %s %s was deleted (%s) though nobody deleted an object that owned it", kind, handle, why))
	}
}

// release records that a user deletes obj: the data it owns is theirs to
// delete, unless another owner remains that is not a transfer's target
// (before its point of no return a snapshot transfer's target owns the
// data too, but only the transfer made it).
func (w *world) release(obj runtime.Object) {
	uid := metaOf(obj).GetUID()
	for _, d := range w.data {
		owners := w.owners(d)
		if !slices.ContainsFunc(owners, func(o runtime.Object) bool { return metaOf(o).GetUID() == uid }) {
			continue
		}
		if !slices.ContainsFunc(owners, func(o runtime.Object) bool {
			return metaOf(o).GetUID() != uid && metaOf(o).GetAnnotations()[plan.RequestAnnotation] == ""
		}) {
			d.released = true
		}
	}
}

// checkControllerDelete: no step of the controller deletes data (every
// object it deletes holds its data under Retain), and it passes a point
// of no return only with both consents: the request it syncs is not
// being deleted, and an accept matches it.
func (w *world) checkControllerDelete(key storeKey) {
	obj := w.get(key)
	for _, d := range w.data {
		if obj == nil || d.sourceUID != metaOf(obj).GetUID() || metaOf(obj).GetDeletionTimestamp() != nil {
			continue
		}
		ns, name, _ := strings.Cut(w.syncing, "/")
		r, _ := w.get(storeKey{resRequests, ns, name}).(*transferv1alpha1.StorageTransferRequest)
		if r == nil {
			continue
		}
		c := w.consents()
		switch {
		case !c.request[r.UID]:
			w.violated(d.name()+"-source-deleted-though-its-request-was-deleted", fmt.Sprintf("the controller deletes %s for request %s, which is being deleted", key, w.syncing))
		case !c.accept[r.UID]:
			w.violated(d.name()+"-source-deleted-though-its-accept-was-deleted", fmt.Sprintf("the controller deletes %s for request %s, which no accept matches", key, w.syncing))
		}
	}
	var content *snapv1.VolumeSnapshotContent
	switch obj := obj.(type) {
	case *snapv1.VolumeSnapshotContent:
		content = obj
	case *snapv1.VolumeSnapshot:
		if obj.Status != nil && obj.Status.BoundVolumeSnapshotContentName != nil {
			content, _ = w.get(storeKey{resContents, "", *obj.Status.BoundVolumeSnapshotContentName}).(*snapv1.VolumeSnapshotContent)
		}
	case *v1.PersistentVolumeClaim:
		pv, _ := w.get(storeKey{resVolumes, "", obj.Spec.VolumeName}).(*v1.PersistentVolume)
		if pv != nil && pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimDelete && pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.UID == obj.UID {
			w.violated("claim-step-deletes-data", fmt.Sprintf("the controller deletes %s, bound to %s under Delete", key, pv.Name))
		}
	}
	if content != nil && content.Spec.DeletionPolicy == snapv1.VolumeSnapshotContentDelete {
		w.violated("snapshot-step-deletes-data", fmt.Sprintf("the controller deletes %s, whose content %s is under Delete", key, content.Name))
	}
}

// contentHandle is the backend snapshot a content names: a
// pre-provisioned content's, else the one the csi-snapshotter reported.
func contentHandle(c *snapv1.VolumeSnapshotContent) string {
	if c.Status == nil {
		return ptr.Deref(c.Spec.Source.SnapshotHandle, "")
	}
	return ptr.Deref(c.Spec.Source.SnapshotHandle, ptr.Deref(c.Status.SnapshotHandle, ""))
}

// holders are the contents or volumes that name d, and their policies.
func (w *world) holders(d *datum) (names []string, policies []string) {
	if d.kind == dataSnapshot {
		for _, obj := range w.list(resContents, "") {
			if c := obj.(*snapv1.VolumeSnapshotContent); contentHandle(c) == d.handle {
				names, policies = append(names, c.Name), append(policies, string(c.Spec.DeletionPolicy))
			}
		}
		return names, policies
	}
	for _, obj := range w.list(resVolumes, "") {
		if pv := obj.(*v1.PersistentVolume); pv.Spec.CSI != nil && pv.Spec.CSI.VolumeHandle == d.handle {
			names, policies = append(names, pv.Name), append(policies, string(pv.Spec.PersistentVolumeReclaimPolicy))
		}
	}
	return names, policies
}

// owners are the live snapshots or claims that own d: bound to a content
// or volume that names d and names them back.
func (w *world) owners(d *datum) []runtime.Object {
	var out []runtime.Object
	if d.kind == dataSnapshot {
		for _, obj := range w.list(resContents, "") {
			c := obj.(*snapv1.VolumeSnapshotContent)
			if contentHandle(c) != d.handle || c.DeletionTimestamp != nil {
				continue
			}
			ref := c.Spec.VolumeSnapshotRef
			s, _ := w.get(storeKey{resSnapshots, ref.Namespace, ref.Name}).(*snapv1.VolumeSnapshot)
			if s == nil || s.DeletionTimestamp != nil || ref.UID != "" && ref.UID != s.UID {
				continue
			}
			bound := s.Status != nil && s.Status.BoundVolumeSnapshotContentName != nil && *s.Status.BoundVolumeSnapshotContentName == c.Name
			named := s.Spec.Source.VolumeSnapshotContentName != nil && *s.Spec.Source.VolumeSnapshotContentName == c.Name
			if bound || named {
				out = append(out, s)
			}
		}
		return out
	}
	for _, obj := range w.list(resVolumes, "") {
		pv := obj.(*v1.PersistentVolume)
		if pv.Spec.CSI == nil || pv.Spec.CSI.VolumeHandle != d.handle || pv.DeletionTimestamp != nil || pv.Spec.ClaimRef == nil {
			continue
		}
		ref := pv.Spec.ClaimRef
		pvc, _ := w.get(storeKey{resClaims, ref.Namespace, ref.Name}).(*v1.PersistentVolumeClaim)
		if pvc != nil && pvc.DeletionTimestamp == nil && pvc.Spec.VolumeName == pv.Name && (ref.UID == "" || ref.UID == pvc.UID) {
			out = append(out, pvc)
		}
	}
	return out
}

// underWay are the requests that transfer d's source and have not ended
// (neither Completed nor Failed).
func (w *world) underWay(d *datum) []*transferv1alpha1.StorageTransferRequest {
	var out []*transferv1alpha1.StorageTransferRequest
	for _, obj := range w.list(resRequests, d.source.namespace) {
		r := obj.(*transferv1alpha1.StorageTransferRequest)
		if r.Spec.Source.Name == d.source.name && targetResource(r) == d.source.resource && !ended(r) {
			out = append(out, r)
		}
	}
	return out
}

// ended reports whether r's transfer has ended.
func ended(r *transferv1alpha1.StorageTransferRequest) bool {
	return r.Status.Phase == transferv1alpha1.PhaseCompleted || r.Status.Phase == transferv1alpha1.PhaseFailed
}

// targetResource is the resource a request transfers.
func targetResource(r *transferv1alpha1.StorageTransferRequest) string {
	if r.Spec.Source.Kind == transferv1alpha1.KindVolumeSnapshot {
		return resSnapshots
	}
	return resClaims
}

// checkQuiescent checks every invariant of a world at rest: no controller,
// nor the modeled ones, has anything left to do.
func (w *world) checkQuiescent(lastErr map[string]error) {
	judged := map[types.UID]bool{}
	for _, d := range w.data {
		if name, detail := w.judge(d, lastErr); name != "" {
			w.violated(d.name()+"-"+name, detail)
			underWay := w.underWay(d)
			for _, r := range underWay {
				judged[r.UID] = true
			}
		}
	}
	for _, obj := range w.list(resRequests, "") {
		r := obj.(*transferv1alpha1.StorageTransferRequest)
		if !judged[r.UID] {
			w.checkSaysSo(r, lastErr)
		}
		w.checkAdvice(r)
	}
	w.checkLeftBehind()
}

// judge is the verdict on one datum at rest: owned by exactly one object,
// the source as it was or the target as the transfer promised, or
// deleted because a user deleted its owner.
func (w *world) judge(d *datum, lastErr map[string]error) (string, string) {
	names, policies := w.holders(d)
	if !d.exists {
		if len(names) > 0 {
			return "names-deleted-data", fmt.Sprintf("the backend %s %s was deleted, yet %v name it", d.kind, d.handle, names)
		}
		return "", "" // destroyed is told when it happens
	}
	owners := w.owners(d)
	underWay := w.underWay(d)
	// The transfer that holds the datum: the first under way that began.
	var stuck *transferv1alpha1.StorageTransferRequest
	for _, r := range underWay {
		if stuck == nil || stuck.Status.Record == nil && r.Status.Record != nil {
			stuck = r
		}
	}
	switch {
	case len(owners) == 0 && slices.ContainsFunc(underWay, waitsForPods):
		return "", "" // docs/transfer.md: past its point of no return, a claim waits for its pods
	case len(owners) > 1:
		return "owned-twice", fmt.Sprintf("the backend %s %s is owned by %s and %s", d.kind, d.handle, keyOf(owners[0]), keyOf(owners[1]))
	case len(owners) == 0 && d.released && d.policy == string(v1.PersistentVolumeReclaimDelete) && slices.ContainsFunc(policies, func(p string) bool { return p != d.policy }):
		return "backend-leaked" + w.why(stuck), fmt.Sprintf("its owner deleted it under Delete, yet the backend %s %s stays, held by %v (policies %v)", d.kind, d.handle, names, policies)
	case len(owners) == 0 && !d.released:
		return "stranded" + w.why(stuck), fmt.Sprintf("nothing owns the backend %s %s (held by %v, policies %v)%s", d.kind, d.handle, names, policies, w.said(stuck, lastErr))
	case len(owners) == 0:
		return "", ""
	}
	owner := metaOf(owners[0])
	if uid := types.UID(owner.GetAnnotations()[plan.RequestAnnotation]); uid != "" && d.left != nil {
		// A source the controller deleted had both consents then
		// (checkControllerDelete); one its owner deleted is checked here.
		byUser := d.left.by != "controller"
		nsUID := metaOf(w.get(storeKey{resNamespaces, "", owner.GetNamespace()})).GetUID()
		switch {
		case byUser && !d.left.request[uid]:
			return "handed-over-though-its-request-was-deleted", fmt.Sprintf("%s owns the backend %s %s, yet when the source began to be deleted (by the %s) its request was gone or being deleted", keyOf(owners[0]), d.kind, d.handle, d.left.by)
		case byUser && !d.left.accept[uid]:
			return "handed-over-though-its-accept-was-deleted", fmt.Sprintf("%s owns the backend %s %s, yet when the source began to be deleted (by the %s) no accept matched its request", keyOf(owners[0]), d.kind, d.handle, d.left.by)
		case owner.GetNamespace() == d.source.namespace && owner.GetName() == d.source.name:
			// Given back: the source's own namespace and name.
		case d.left.accept[uid] && d.left.namespace[uid] != nsUID:
			return "handed-to-a-namespace-that-did-not-accept", fmt.Sprintf("%s owns the backend %s %s, but its namespace is not the one whose accept matched when the source began to be deleted", keyOf(owners[0]), d.kind, d.handle)
		}
	}
	if len(underWay) > 0 {
		return "", "" // checkSaysSo judges a transfer under way
	}
	for i, p := range policies {
		if p != d.policy {
			return "policy-not-restored", fmt.Sprintf("%s owns the backend %s %s and no transfer is under way, but %s is %s, not %s", keyOf(owners[0]), d.kind, d.handle, names[i], p, d.policy)
		}
	}
	return "", ""
}

// waitsForPods reports whether r waits for the pods that use its source
// to end.
func waitsForPods(r *transferv1alpha1.StorageTransferRequest) bool {
	if r == nil {
		return false
	}
	cond := meta.FindStatusCondition(r.Status.Conditions, transferv1alpha1.ConditionTransferred)
	return cond != nil && cond.Reason == plan.ReasonSourceInUse
}

// The reasons that say a transfer is moving: at rest, a transfer that
// gives one of them is stuck and does not say so.
var movingReasons = []string{plan.ReasonTransferring, plan.ReasonWaitingForTarget, plan.ReasonRollingBack}

// checkSaysSo: a transfer at rest that has not ended says why in its
// Transferred condition.
func (w *world) checkSaysSo(r *transferv1alpha1.StorageTransferRequest, lastErr map[string]error) {
	if ended(r) {
		return
	}
	cond := meta.FindStatusCondition(r.Status.Conditions, transferv1alpha1.ConditionTransferred)
	if cond == nil {
		return
	}
	if slices.Contains(movingReasons, cond.Reason) {
		w.violated(kindName(r)+"-stalls-silently"+w.why(r), fmt.Sprintf("%s/%s is at rest but its condition says %s: %s%s", r.Namespace, r.Name, cond.Reason, cond.Message, w.said(r, lastErr)))
	}
}

// checkAdvice: what a transfer that needs attention advises never deletes
// an object that owns data.
func (w *world) checkAdvice(r *transferv1alpha1.StorageTransferRequest) {
	cond := meta.FindStatusCondition(r.Status.Conditions, transferv1alpha1.ConditionTransferred)
	if cond != nil && cond.Reason == plan.ReasonNeedsAttention && advisesDeleting.MatchString(cond.Message) {
		for _, d := range w.data {
			for _, o := range w.owners(d) {
				if strings.Contains(cond.Message, metaOf(o).GetNamespace()+"/"+metaOf(o).GetName()) {
					w.violated(kindName(r)+"-advises-deleting-data", fmt.Sprintf("%s/%s says %q, and %s owns the backend %s %s", r.Namespace, r.Name, cond.Message, keyOf(o), d.kind, d.handle))
				}
			}
		}
	}
}

var advisesDeleting = regexp.MustCompile(`\b(delete|remove)\b`)

// kindName is how a violation names the kind a request transfers.
func kindName(r *transferv1alpha1.StorageTransferRequest) string {
	if r.Spec.Source.Kind == transferv1alpha1.KindVolumeSnapshot {
		return "snapshot"
	}
	return "claim"
}

// why names what keeps a transfer from going on, as the world shows it.
func (w *world) why(r *transferv1alpha1.StorageTransferRequest) string {
	if r == nil {
		return ""
	}
	ns := r.Status.TargetNamespace
	if ns == "" {
		return ""
	}
	nsObj, _ := w.get(storeKey{resNamespaces, "", ns}).(*v1.Namespace)
	target := w.get(storeKey{targetResource(r), ns, r.Spec.TargetName})
	switch {
	case nsObj == nil:
		return "-by-gone-target-namespace"
	case nsObj.DeletionTimestamp != nil:
		return "-by-terminating-target-namespace"
	case w.refused[storeKey{targetResource(r), ns, ""}]:
		return "-by-refused-target"
	case target == nil:
		return ""
	case metaOf(target).GetAnnotations()[plan.RequestAnnotation] == "":
		return "-by-taken-target-name"
	case metaOf(target).GetAnnotations()[plan.RequestAnnotation] != string(r.UID):
		return "-by-the-target-of-another-transfer"
	}
	return ""
}

// said is what the request says and its last sync's error, for a detail.
func (w *world) said(r *transferv1alpha1.StorageTransferRequest, lastErr map[string]error) string {
	if r == nil {
		return ""
	}
	s := ""
	if cond := meta.FindStatusCondition(r.Status.Conditions, transferv1alpha1.ConditionTransferred); cond != nil {
		s = fmt.Sprintf("; %s/%s says %s: %s", r.Namespace, r.Name, cond.Reason, cond.Message)
	}
	if err := lastErr[r.Namespace+"/"+r.Name]; err != nil {
		s += "; its last sync failed: " + err.Error()
	}
	return s
}

// checkLeftBehind: no lock annotation nor transfer finalizer without a
// transfer under way that holds it.
func (w *world) checkLeftBehind() {
	underWay := map[string]bool{}
	for _, obj := range w.list(resRequests, "") {
		r := obj.(*transferv1alpha1.StorageTransferRequest)
		if !ended(r) {
			underWay[string(r.UID)] = true
		}
	}
	for _, obj := range w.list(resRequests, "") {
		if r := obj.(*transferv1alpha1.StorageTransferRequest); r.DeletionTimestamp != nil && ended(r) && slices.Contains(r.Finalizers, plan.Finalizer) {
			w.violated(kindName(r)+"-request-finalizer-left-behind", fmt.Sprintf("%s was deleted and its transfer ended, but it keeps its finalizer", keyOf(r)))
		}
	}
	for _, res := range []string{resClaims, resSnapshots, resContents} {
		for _, obj := range w.list(res, "") {
			m := metaOf(obj)
			kind := map[string]string{resClaims: "claim", resSnapshots: "snapshot", resContents: "content"}[res]
			if uid, ok := m.GetAnnotations()[plan.LockAnnotation]; ok && !underWay[uid] {
				w.violated(kind+"-lock-left-behind", fmt.Sprintf("%s keeps the lock of request %s, which is not under way", keyOf(obj), uid))
			}
			if slices.Contains(m.GetFinalizers(), plan.Finalizer) && !underWay[m.GetAnnotations()[plan.LockAnnotation]] {
				w.violated(kind+"-finalizer-left-behind", fmt.Sprintf("%s keeps the transfer finalizer, and no transfer under way holds its lock", keyOf(obj)))
			}
		}
	}
}
