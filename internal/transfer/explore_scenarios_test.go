package transfer

// The explorer's scenarios (explore_test.go): the cluster a history starts
// from, the requests it schedules, and the moves the outside world may
// make in it.

import (
	"time"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// The namespaces of every scenario: the source's, the target's, and
// another one (a rival accept, the second target of a source).
const (
	sourceNS = "prod"
	targetNS = "test"
	otherNS  = "other"
)

// scenario is where histories start.
type scenario struct {
	name string
	// build fills a new world.
	build func(w *world)
	// requests are the keys of the requests, in the order the default
	// schedule takes them.
	requests []string
	moves    []move
}

// move is something the outside world does: a user, or another
// controller's decision the transfer does not control.
type move struct {
	name string
	can  func(w *world) bool
	do   func(w *world)
}

// newWorld is an empty cluster with the three namespaces.
func newWorld() *world {
	w := &world{objects: map[storeKey]runtime.Object{}, born: map[storeKey]int{}, refused: map[storeKey]bool{},
		held: map[string]bool{}, now: metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))}
	for _, ns := range []string{sourceNS, targetNS, otherNS} {
		w.add(&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, UID: types.UID("ns-" + ns)}, Status: v1.NamespaceStatus{Phase: v1.NamespaceActive}})
	}
	return w
}

// addDatum adds objs, the first of which owns a new datum.
func (w *world) addDatum(kind, handle, policy string, objs ...runtime.Object) {
	for _, obj := range objs {
		w.add(obj)
	}
	owner := w.get(keyOf(objs[0]))
	w.data = append(w.data, &datum{kind: kind, handle: handle, policy: policy, source: keyOf(owner), sourceUID: metaOf(owner).GetUID(), exists: true})
}

// addSnapshot adds a ready VolumeSnapshot namespace/name bound to a
// content (Delete) of the backend snapshot handle.
func (w *world) addSnapshot(namespace, name, handle string) {
	content := "snapcontent-" + handle
	uid := types.UID(namespace + "-" + name + "-" + handle)
	w.addDatum(dataSnapshot, handle, string(snapv1.VolumeSnapshotContentDelete),
		&snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: uid, Finalizers: []string{snapshotBoundFinalizer}},
			Spec:   snapv1.VolumeSnapshotSpec{VolumeSnapshotClassName: ptr.To("csi-snapclass"), Source: snapv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr.To("data")}},
			Status: &snapv1.VolumeSnapshotStatus{ReadyToUse: ptr.To(true), BoundVolumeSnapshotContentName: ptr.To(content)}},
		&snapv1.VolumeSnapshotContent{ObjectMeta: metav1.ObjectMeta{Name: content},
			Spec: snapv1.VolumeSnapshotContentSpec{VolumeSnapshotRef: v1.ObjectReference{Namespace: namespace, Name: name, UID: uid},
				DeletionPolicy: snapv1.VolumeSnapshotContentDelete, Driver: "local.csi", Source: snapv1.VolumeSnapshotContentSource{VolumeHandle: ptr.To("vol-" + handle)}},
			Status: &snapv1.VolumeSnapshotContentStatus{SnapshotHandle: ptr.To(handle), ReadyToUse: ptr.To(true)}})
}

// addClaim adds a claim namespace/name bound to a volume (Delete) of the
// backend volume handle.
func (w *world) addClaim(namespace, name, handle string) {
	pv := "pv-" + handle
	uid := types.UID(namespace + "-" + name + "-" + handle)
	w.addDatum(dataVolume, handle, string(v1.PersistentVolumeReclaimDelete),
		&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: uid, Finalizers: []string{pvcProtectionFinalizer}},
			Spec: v1.PersistentVolumeClaimSpec{VolumeName: pv, StorageClassName: ptr.To("csi"), AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}},
			Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound}},
		&v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pv},
			Spec: v1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete, StorageClassName: "csi",
				Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
				PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "local.csi", VolumeHandle: handle}},
				ClaimRef:               &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: namespace, Name: name, UID: uid}},
			Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound}})
}

// addTransfer adds a request in sourceNS for the source of kind, to
// targetName, and the accept acceptNamespace/acceptName that matches it.
func (w *world) addTransfer(kind, source, name, acceptNamespace, acceptName, targetName string) {
	w.add(&transferv1alpha1.StorageTransferRequest{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: sourceNS, UID: types.UID("uid-" + name)},
		Spec: transferv1alpha1.StorageTransferRequestSpec{Source: transferv1alpha1.TransferSource{Kind: kind, Name: source},
			AcceptName: acceptName, TargetName: targetName, Token: testToken}})
	w.add(&transferv1alpha1.StorageTransferAccept{ObjectMeta: metav1.ObjectMeta{Name: acceptName, Namespace: acceptNamespace},
		Spec: transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: sourceNS, RequestName: name, RequestToken: testToken}})
}

// scenarios are the starting points the explorer explores from.
func scenarios() []*scenario {
	snap, claim := transferv1alpha1.KindVolumeSnapshot, transferv1alpha1.KindPersistentVolumeClaim
	return []*scenario{
		newScenario("snapshot", snap, func(w *world) {
			w.addSnapshot(sourceNS, "foo", "snap-1")
			w.addTransfer(snap, "foo", "move", targetNS, "accept", "bar")
		}),
		newScenario("claim", claim, func(w *world) {
			w.addClaim(sourceNS, "data", "vol-1")
			w.addTransfer(claim, "data", "move", targetNS, "accept", "bar")
		}),
		newScenario("snapshots-to-one-target", snap, func(w *world) {
			w.addSnapshot(sourceNS, "foo", "snap-1")
			w.addSnapshot(sourceNS, "foo-2", "snap-2")
			w.addTransfer(snap, "foo", "move", targetNS, "accept", "bar")
			w.addTransfer(snap, "foo-2", "move-2", targetNS, "accept-2", "bar")
		}),
		newScenario("claims-to-one-target", claim, func(w *world) {
			w.addClaim(sourceNS, "data", "vol-1")
			w.addClaim(sourceNS, "data-2", "vol-2")
			w.addTransfer(claim, "data", "move", targetNS, "accept", "bar")
			w.addTransfer(claim, "data-2", "move-2", targetNS, "accept-2", "bar")
		}),
		newScenario("snapshot-to-two-targets", snap, func(w *world) {
			w.addSnapshot(sourceNS, "foo", "snap-1")
			w.addTransfer(snap, "foo", "move", targetNS, "accept", "bar")
			w.addTransfer(snap, "foo", "move-2", otherNS, "accept-2", "baz")
		}),
		newScenario("claim-to-two-targets", claim, func(w *world) {
			w.addClaim(sourceNS, "data", "vol-1")
			w.addTransfer(claim, "data", "move", targetNS, "accept", "bar")
			w.addTransfer(claim, "data", "move-2", otherNS, "accept-2", "baz")
		}),
	}
}

// newScenario is a scenario of kind built by build, with every move that
// applies to its requests, sources and target namespace.
func newScenario(name, kind string, build func(w *world)) *scenario {
	sc := &scenario{name: name, build: build}
	w := newWorld()
	build(w)
	for _, obj := range w.list(resRequests, "") {
		r := obj.(*transferv1alpha1.StorageTransferRequest)
		sc.requests = append(sc.requests, r.Namespace+"/"+r.Name)
		sc.moves = append(sc.moves,
			deleteMove("delete-request:"+r.Name, keyOf(r)),
			deleteMove("delete-source-and-request:"+r.Name, keyOf(r), storeKey{targetResource(r), sourceNS, r.Spec.Source.Name}))
	}
	for _, obj := range w.list(resAccepts, "") {
		sc.moves = append(sc.moves, deleteMove("delete-accept:"+keyOf(obj).namespace+"/"+keyOf(obj).name, keyOf(obj)))
	}
	for _, d := range w.data {
		sc.moves = append(sc.moves, deleteMove("delete-source:"+d.source.name, d.source), recreateMove(d))
		if kind == transferv1alpha1.KindPersistentVolumeClaim {
			sc.moves = append(sc.moves, podMoves(d.source)...)
		}
	}
	sc.moves = append(sc.moves, targetMoves(kind)...)
	sc.moves = append(sc.moves, moreTargetMoves(kind)...)
	return sc
}

// deleteMove is a user deleting the objects keys, in that order, once
// each exists and is not being deleted.
func deleteMove(name string, keys ...storeKey) move {
	return move{name: name,
		can: func(w *world) bool {
			for _, k := range keys {
				if obj := w.get(k); obj == nil || metaOf(obj).GetDeletionTimestamp() != nil {
					return false
				}
			}
			return true
		},
		do: func(w *world) {
			for _, k := range keys {
				w.release(w.get(k))
				_ = w.del("user", k, nil, false)
			}
		}}
}

// recreateMove is a user creating a new source of the same name, on new
// data, once the source is gone.
func recreateMove(d *datum) move {
	return move{name: "recreate-source:" + d.source.name,
		can: func(w *world) bool { return w.get(d.source) == nil && w.datum(d.kind, d.handle+"-new") == nil },
		do: func(w *world) {
			if d.kind == dataVolume {
				w.addClaim(d.source.namespace, d.source.name, d.handle+"-new")
			} else {
				w.addSnapshot(d.source.namespace, d.source.name, d.handle+"-new")
			}
			w.logf("user creates %s again, on new data", d.source)
		}}
}

// podMoves are a pod starting to use the claim, and ending.
func podMoves(claim storeKey) []move {
	pod := storeKey{resPods, claim.namespace, "app-" + claim.name}
	return []move{
		{name: "pod-uses-source:" + claim.name,
			can: func(w *world) bool {
				c := w.get(claim)
				return c != nil && metaOf(c).GetDeletionTimestamp() == nil && w.get(pod) == nil
			},
			do: func(w *world) {
				w.add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.name, Namespace: pod.namespace},
					Spec: v1.PodSpec{Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
						PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim.name}}}}},
					Status: v1.PodStatus{Phase: v1.PodRunning}})
				w.logf("user starts %s", pod)
			}},
		{name: "pod-ends:" + claim.name,
			can: func(w *world) bool {
				p, _ := w.get(pod).(*v1.Pod)
				return p != nil && p.Status.Phase == v1.PodRunning
			},
			do: func(w *world) {
				p := w.get(pod).(*v1.Pod).DeepCopy()
				p.Status.Phase = v1.PodSucceeded
				w.set("kubelet", p, true)
			}},
	}
}

// targetMoves are the moves of the target namespace's owner and of its
// admission: an object of the target name, a quota, the namespace
// deleted (for good, or held Terminating), created again, and an accept
// in another namespace that quotes the token (a rival).
func targetMoves(kind string) []move {
	res := resClaims
	if kind == transferv1alpha1.KindVolumeSnapshot {
		res = resSnapshots
	}
	nsKey := storeKey{resNamespaces, "", targetNS}
	active := func(w *world) bool {
		ns := w.get(nsKey)
		return ns != nil && metaOf(ns).GetDeletionTimestamp() == nil
	}
	// The namespace controller (explore_others_test.go) deletes what is
	// in it, and it once it is empty unless it is held.
	deleteNS := func(hold bool) func(w *world) {
		return func(w *world) { w.deleteNamespace(targetNS, hold) }
	}
	return []move{
		{name: "create-target-object",
			can: func(w *world) bool { return active(w) && w.get(storeKey{res, targetNS, "bar"}) == nil },
			do: func(w *world) {
				if res == resClaims {
					w.addClaim(targetNS, "bar", "vol-taken")
				} else {
					w.addSnapshot(targetNS, "bar", "snap-taken")
				}
				w.logf("user creates %s of its own", storeKey{res, targetNS, "bar"})
			}},
		{name: "quota-on-target",
			can: func(w *world) bool { return active(w) && !w.refused[storeKey{res, targetNS, ""}] },
			do: func(w *world) {
				w.refused[storeKey{res, targetNS, ""}] = true
				w.logf("a quota in %s refuses every new %s", targetNS, res)
			}},
		{name: "terminate-target-namespace", can: active, do: deleteNS(true)},
		{name: "delete-target-namespace", can: active, do: deleteNS(false)},
		{name: "create-target-namespace",
			can: func(w *world) bool { return w.get(nsKey) == nil },
			do: func(w *world) {
				w.add(&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: targetNS}, Status: v1.NamespaceStatus{Phase: v1.NamespaceActive}})
				w.logf("user creates %s again", nsKey)
			}},
		{name: "rival-accept",
			can: func(w *world) bool { return w.get(storeKey{resAccepts, otherNS, "accept"}) == nil },
			do: func(w *world) {
				w.add(&transferv1alpha1.StorageTransferAccept{ObjectMeta: metav1.ObjectMeta{Name: "accept", Namespace: otherNS},
					Spec: transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: sourceNS, RequestName: "move", RequestToken: testToken}})
				w.logf("user creates accept %s/accept quoting the token of request move", otherNS)
			}},
	}
}

// moreTargetMoves are more moves of the target namespace's owner (found
// by the adversarial review of issue 23's fixes): delete the object of the target name (whoever
// made it: the transfer's own Pending claim, or its snapshot, restorable
// before the point of no return); and the target namespace deleted and
// created again (by anyone) at once, between two syncs.
func moreTargetMoves(kind string) []move {
	res := resClaims
	if kind == transferv1alpha1.KindVolumeSnapshot {
		res = resSnapshots
	}
	target := storeKey{res, targetNS, "bar"}
	nsKey := storeKey{resNamespaces, "", targetNS}
	active := func(w *world) bool {
		ns := w.get(nsKey)
		return ns != nil && metaOf(ns).GetDeletionTimestamp() == nil
	}
	return []move{
		{name: "delete-target-object",
			can: func(w *world) bool {
				obj := w.get(target)
				return obj != nil && metaOf(obj).GetDeletionTimestamp() == nil
			},
			do: func(w *world) {
				w.release(w.get(target))
				_ = w.del("user", target, nil, false)
			}},
		{name: "recreate-target-namespace",
			can: func(w *world) bool { return active(w) && metaOf(w.get(nsKey)).GetUID() == "ns-"+targetNS },
			do: func(w *world) {
				w.deleteNamespace(targetNS, false)
				w.runOthers()
				if w.get(nsKey) != nil {
					return // held by something: not gone yet
				}
				w.add(&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: targetNS, UID: "ns-" + targetNS + "-again"}, Status: v1.NamespaceStatus{Phase: v1.NamespaceActive}})
				w.logf("someone creates %s again", nsKey)
			}},
	}
}

// deleteNamespace is a user deleting namespace name: Terminating, held
// there (hold) or let go by the namespace controller once it is empty.
func (w *world) deleteNamespace(name string, hold bool) {
	key := storeKey{resNamespaces, "", name}
	w.held[name] = hold
	ns := w.get(key).(*v1.Namespace).DeepCopy()
	ns.DeletionTimestamp = &w.now
	ns.Status.Phase = v1.NamespaceTerminating
	w.store(key, ns)
	w.logf("user deletes %s", key)
}
