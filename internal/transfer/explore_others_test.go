package transfer

// The other controllers of the explorer's cluster (explore_test.go), each
// the small deterministic part of its behavior a transfer depends on:
// the namespace controller, pvc-protection, the PV controller with the
// external-provisioner's deletion, and the snapshot controller with the
// csi-snapshotter's deletion (in explore_api_test.go's remove).

import (
	"slices"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// The finalizers the other controllers put and remove.
const (
	pvcProtectionFinalizer      = "kubernetes.io/pvc-protection"
	snapshotBoundFinalizer      = "snapshot.storage.kubernetes.io/volumesnapshot-bound-protection"
	maxRoundsOfOtherControllers = 20
)

// runOthers lets the other controllers act until none has anything left
// to do.
func (w *world) runOthers() {
	for range maxRoundsOfOtherControllers {
		rv := w.rv
		w.namespaceController()
		w.pvcProtection()
		w.pvController()
		w.snapshotController()
		if w.rv == rv {
			return
		}
	}
	panic("the other controllers do not settle")
}

// namespaceController deletes everything in a namespace being deleted,
// and the namespace once it is empty (unless another finalizer holds it).
func (w *world) namespaceController() {
	for _, obj := range w.list(resNamespaces, "") {
		ns := obj.(*v1.Namespace)
		if ns.DeletionTimestamp == nil {
			continue
		}
		empty := true
		for _, res := range namespacedResources {
			for _, o := range w.list(res, ns.Name) {
				empty = false
				if metaOf(o).GetDeletionTimestamp() == nil {
					w.release(o)
					_ = w.del("namespace-controller", keyOf(o), nil, false)
				}
			}
		}
		if empty && !w.held[ns.Name] {
			w.logf("namespace-controller deletes %s", keyOf(ns))
			w.remove("namespace-controller", keyOf(ns))
		}
	}
}

// namespacedResources are the namespaced resources, in the order the
// namespace controller deletes them.
var namespacedResources = []string{resAccepts, resClaims, resPods, resRequests, resSnapshots}

// usedByPod reports whether a pod that has not ended uses the claim.
func (w *world) usedByPod(pvc *v1.PersistentVolumeClaim) bool {
	for _, obj := range w.list(resPods, pvc.Namespace) {
		pod := obj.(*v1.Pod)
		if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
			continue
		}
		for _, vol := range pod.Spec.Volumes {
			if vol.PersistentVolumeClaim != nil && vol.PersistentVolumeClaim.ClaimName == pvc.Name {
				return true
			}
		}
	}
	return false
}

// pvcProtection lets a claim being deleted go once no pod uses it.
func (w *world) pvcProtection() {
	for _, obj := range w.list(resClaims, "") {
		pvc := obj.(*v1.PersistentVolumeClaim)
		if pvc.DeletionTimestamp != nil && slices.Contains(pvc.Finalizers, pvcProtectionFinalizer) && !w.usedByPod(pvc) {
			w.removeFinalizer("pvc-protection", keyOf(pvc), pvcProtectionFinalizer)
		}
	}
}

// pvController binds claims that name a volume reserved for them (or for
// nobody), marks a volume reserved for a claim that does not exist yet
// Available and one whose claim is gone Released, and deletes (the
// external-provisioner) the volume of a Released PV under Delete.
func (w *world) pvController() {
	for _, obj := range w.list(resClaims, "") {
		pvc := obj.(*v1.PersistentVolumeClaim)
		pv, _ := w.get(storeKey{resVolumes, "", pvc.Spec.VolumeName}).(*v1.PersistentVolume)
		if pvc.Spec.VolumeName == "" || pv == nil {
			continue
		}
		ref := pv.Spec.ClaimRef
		mine := ref != nil && ref.Namespace == pvc.Namespace && ref.Name == pvc.Name && (ref.UID == "" || ref.UID == pvc.UID)
		switch {
		case pvc.Status.Phase != v1.ClaimBound && pvc.DeletionTimestamp == nil && (ref == nil || mine) && pv.DeletionTimestamp == nil:
			pv = pv.DeepCopy()
			pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID}
			w.set("pv-controller", pv, false)
			pvc = pvc.DeepCopy()
			pvc.Status.Phase = v1.ClaimBound
			w.set("pv-controller", pvc, true)
		case pvc.Status.Phase == v1.ClaimBound && !mine:
			// ClaimMisbound: "Two claims are bound to the same volume".
			pvc = pvc.DeepCopy()
			pvc.Status.Phase = v1.ClaimLost
			w.set("pv-controller", pvc, true)
		}
	}
	for _, obj := range w.list(resVolumes, "") {
		pv := obj.(*v1.PersistentVolume)
		phase := v1.VolumeAvailable
		if ref := pv.Spec.ClaimRef; ref != nil && ref.UID != "" {
			pvc, _ := w.get(storeKey{resClaims, ref.Namespace, ref.Name}).(*v1.PersistentVolumeClaim)
			phase = v1.VolumeBound
			if pvc == nil || pvc.UID != ref.UID {
				phase = v1.VolumeReleased
			}
		}
		if phase == v1.VolumeReleased && pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimDelete {
			w.destroy("external-provisioner", dataVolume, pv.Spec.CSI.VolumeHandle, "PersistentVolume "+pv.Name+" was Released under Delete")
			w.logf("external-provisioner deletes %s", keyOf(pv))
			w.remove("external-provisioner", keyOf(pv))
			continue
		}
		if pv.Status.Phase != phase {
			pv = pv.DeepCopy()
			pv.Status.Phase = phase
			w.set("pv-controller", pv, true)
		}
	}
}

// snapshotController binds a VolumeSnapshot to the pre-provisioned content
// it names when the content names it back, handles the deletion of a
// snapshot (its content is deleted under Delete, kept under Retain), and
// deletes a content under Delete whose snapshot is gone.
func (w *world) snapshotController() {
	for _, obj := range w.list(resSnapshots, "") {
		s := obj.(*snapv1.VolumeSnapshot)
		bound := s.Status != nil && s.Status.BoundVolumeSnapshotContentName != nil
		switch {
		case s.DeletionTimestamp != nil:
			if !slices.Contains(s.Finalizers, snapshotBoundFinalizer) {
				continue
			}
			if bound {
				c, _ := w.get(storeKey{resContents, "", *s.Status.BoundVolumeSnapshotContentName}).(*snapv1.VolumeSnapshotContent)
				if c != nil && c.DeletionTimestamp == nil && c.Spec.DeletionPolicy == snapv1.VolumeSnapshotContentDelete {
					_ = w.del("snapshot-controller", keyOf(c), nil, false)
				}
			}
			w.removeFinalizer("snapshot-controller", keyOf(s), snapshotBoundFinalizer)
		case !bound && s.Spec.Source.VolumeSnapshotContentName != nil:
			c, _ := w.get(storeKey{resContents, "", *s.Spec.Source.VolumeSnapshotContentName}).(*snapv1.VolumeSnapshotContent)
			if c == nil || s.Status != nil && s.Status.Error != nil {
				continue
			}
			ref := c.Spec.VolumeSnapshotRef
			s = s.DeepCopy()
			if ref.Namespace != s.Namespace || ref.Name != s.Name || ref.UID != "" && ref.UID != s.UID {
				s.Status = &snapv1.VolumeSnapshotStatus{Error: &snapv1.VolumeSnapshotError{Message: ptr.To("VolumeSnapshotContent " + c.Name + " is bound to another VolumeSnapshot")}}
				w.set("snapshot-controller", s, true)
				continue
			}
			if ref.UID == "" {
				c = c.DeepCopy()
				c.Spec.VolumeSnapshotRef.UID = s.UID
				w.set("snapshot-controller", c, false)
			}
			s.Finalizers = append(s.Finalizers, snapshotBoundFinalizer)
			w.set("snapshot-controller", s.DeepCopy(), false)
			s = w.get(keyOf(s)).(*snapv1.VolumeSnapshot).DeepCopy()
			s.Status = &snapv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: ptr.To(c.Name), ReadyToUse: ptr.To(contentHandle(c) != "")}
			w.set("snapshot-controller", s, true)
		}
	}
	for _, obj := range w.list(resContents, "") {
		c := obj.(*snapv1.VolumeSnapshotContent)
		ref := c.Spec.VolumeSnapshotRef
		if ref.UID == "" || c.DeletionTimestamp != nil || c.Spec.DeletionPolicy != snapv1.VolumeSnapshotContentDelete {
			continue
		}
		if s, _ := w.get(storeKey{resSnapshots, ref.Namespace, ref.Name}).(*snapv1.VolumeSnapshot); s == nil || s.UID != ref.UID {
			_ = w.del("snapshot-controller", keyOf(c), nil, false)
		}
	}
}
