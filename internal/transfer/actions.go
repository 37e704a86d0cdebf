package transfer

import (
	"context"
	"fmt"
	"slices"
	"strings"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// take carries out one step of r's transfer. Every step is idempotent: an
// object already as the step wants it is left alone, an object already
// created is not an error (the next plan checks it is this transfer's), an
// object already gone is not an error. Updates are conditional on the
// resourceVersion read from the cache, deletions on the UID.
func (c *Controller) take(ctx context.Context, r *transferv1alpha1.StorageTransferRequest, o *plan.Observed, a plan.Action) error {
	rec := r.Status.Record
	snaps, kube := c.cfg.Snapshot.SnapshotV1(), c.cfg.Kube.CoreV1()
	var err error
	switch a {
	case plan.ActionLockSource:
		if o.SourceSnapshot != nil {
			s := o.SourceSnapshot.DeepCopy()
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, plan.LockAnnotation, string(r.UID))
			_, err = snaps.VolumeSnapshots(s.Namespace).Update(ctx, s, metav1.UpdateOptions{})
		} else {
			pvc := o.SourceClaim.DeepCopy()
			metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, plan.LockAnnotation, string(r.UID))
			if !slices.Contains(pvc.Finalizers, plan.Finalizer) {
				pvc.Finalizers = append(pvc.Finalizers, plan.Finalizer)
			}
			_, err = kube.PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{})
		}
	case plan.ActionUnlockSource:
		// Only this request's lock: another's (it won the race for the
		// source) and its finalizer stay.
		if o.SourceSnapshot != nil {
			s := o.SourceSnapshot.DeepCopy()
			if s.Annotations[plan.LockAnnotation] != string(r.UID) {
				return nil
			}
			delete(s.Annotations, plan.LockAnnotation)
			_, err = snaps.VolumeSnapshots(s.Namespace).Update(ctx, s, metav1.UpdateOptions{})
		} else {
			pvc := o.SourceClaim.DeepCopy()
			if holder, ok := pvc.Annotations[plan.LockAnnotation]; ok && holder != string(r.UID) {
				return nil
			}
			delete(pvc.Annotations, plan.LockAnnotation)
			pvc.Finalizers = slices.DeleteFunc(pvc.Finalizers, func(f string) bool { return f == plan.Finalizer })
			_, err = kube.PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{})
		}
	case plan.ActionRetainSourceContent:
		err = c.holdContent(ctx, o.SourceContent, snapv1.VolumeSnapshotContentRetain, string(r.UID))
	case plan.ActionRestoreSourceDeletionPolicy:
		err = c.holdContent(ctx, o.SourceContent, snapv1.DeletionPolicy(rec.OriginalDeletionPolicy), "")
	case plan.ActionRestoreDeletionPolicy:
		content := o.TargetContent
		if rec.Returning {
			content = o.ReturnContent
		}
		err = c.setDeletionPolicy(ctx, content, snapv1.DeletionPolicy(rec.OriginalDeletionPolicy))
	case plan.ActionCreateTargetContent:
		return created(snaps.VolumeSnapshotContents().Create(ctx, targetContent(r), metav1.CreateOptions{}))
	case plan.ActionCreateTargetSnapshot:
		return created(snaps.VolumeSnapshots(r.Status.TargetNamespace).Create(ctx, targetSnapshot(r), metav1.CreateOptions{}))
	case plan.ActionCreateReturnContent:
		return created(snaps.VolumeSnapshotContents().Create(ctx, returnContent(r), metav1.CreateOptions{}))
	case plan.ActionReturnSource:
		if r.Spec.Source.Kind == transferv1alpha1.KindVolumeSnapshot {
			return created(snaps.VolumeSnapshots(r.Namespace).Create(ctx, returnSnapshot(r), metav1.CreateOptions{}))
		}
		return created(kube.PersistentVolumeClaims(r.Namespace).Create(ctx, returnClaim(r), metav1.CreateOptions{}))
	case plan.ActionDeleteSource:
		uid := types.UID(rec.SourceUID)
		opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
		if r.Spec.Source.Kind == transferv1alpha1.KindVolumeSnapshot {
			err = snaps.VolumeSnapshots(r.Namespace).Delete(ctx, r.Spec.Source.Name, opts)
		} else {
			// The record carries the claim's spec as observed: deleted
			// only if it is still that claim (not resized meanwhile).
			if o.SourceClaim != nil && o.SourceClaim.UID == uid {
				opts = exactly(&o.SourceClaim.ObjectMeta)
			}
			err = kube.PersistentVolumeClaims(r.Namespace).Delete(ctx, r.Spec.Source.Name, opts)
		}
	case plan.ActionDeleteSourceContent:
		err = snaps.VolumeSnapshotContents().Delete(ctx, o.SourceContent.Name, exactly(&o.SourceContent.ObjectMeta))
	case plan.ActionDeleteTargetSnapshot:
		err = snaps.VolumeSnapshots(o.TargetSnapshot.Namespace).Delete(ctx, o.TargetSnapshot.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &o.TargetSnapshot.UID}})
	case plan.ActionDeleteTargetContent:
		err = snaps.VolumeSnapshotContents().Delete(ctx, o.TargetContent.Name, exactly(&o.TargetContent.ObjectMeta))
	case plan.ActionRetainVolume:
		err = c.setReclaimPolicy(ctx, o.Volume, v1.PersistentVolumeReclaimRetain)
	case plan.ActionRestoreReclaimPolicy:
		err = c.setReclaimPolicy(ctx, o.Volume, rec.OriginalReclaimPolicy)
	case plan.ActionReserveVolume:
		err = c.bindVolume(ctx, o.Volume, o.TargetClaim)
	case plan.ActionReserveVolumeForSource:
		err = c.bindVolume(ctx, o.Volume, o.SourceClaim)
	case plan.ActionCreateTargetClaim:
		return created(kube.PersistentVolumeClaims(r.Status.TargetNamespace).Create(ctx, targetClaim(r), metav1.CreateOptions{}))
	case plan.ActionDeleteTargetClaim:
		err = kube.PersistentVolumeClaims(o.TargetClaim.Namespace).Delete(ctx, o.TargetClaim.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &o.TargetClaim.UID}})
	case plan.ActionReleaseSource:
		pvc := o.SourceClaim.DeepCopy()
		pvc.Finalizers = slices.DeleteFunc(pvc.Finalizers, func(f string) bool { return f == plan.Finalizer })
		_, err = kube.PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{})
	default:
		return fmt.Errorf("no such step %q", a)
	}
	if apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// created is the outcome of a create: one that already exists is not an
// error (the next plan checks it is this transfer's), one refused is, also
// NotFound (the namespace is gone: nothing was created).
func created[T any](_ T, err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// Refusal reports whether err is the API server refusing a create for
// good, until someone changes the namespace (its admission, a quota, a
// policy, the namespace terminating or gone), rather than a failure worth
// retrying at once.
func Refusal(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)
}

// bindVolume binds pv to claim, UID and all: the PV controller then binds
// the claim (Pending, naming pv) to it.
func (c *Controller) bindVolume(ctx context.Context, pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	pv = pv.DeepCopy()
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID}
	_, err := c.cfg.Kube.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
	return err
}

// exactly deletes the object as observed: a content is deleted because it
// was seen Retain, and a stale cache must not delete one that has been
// set to Delete since (the backend snapshot would go with it).
func exactly(m *metav1.ObjectMeta) metav1.DeleteOptions {
	p := &metav1.Preconditions{UID: &m.UID}
	if m.ResourceVersion != "" {
		p.ResourceVersion = &m.ResourceVersion
	}
	return metav1.DeleteOptions{Preconditions: p}
}

// holdContent sets the deletionPolicy of the source content and, in the
// same write, its lock: the UID of the request that retained it ("" to
// remove it). Once its snapshot is gone, the lock is how a transfer knows
// that the content is Retain because of it, not because of another.
func (c *Controller) holdContent(ctx context.Context, content *snapv1.VolumeSnapshotContent, policy snapv1.DeletionPolicy, lock string) error {
	if content.Spec.DeletionPolicy == policy && content.Annotations[plan.LockAnnotation] == lock {
		return nil
	}
	content = content.DeepCopy()
	content.Spec.DeletionPolicy = policy
	if lock == "" {
		delete(content.Annotations, plan.LockAnnotation)
	} else {
		metav1.SetMetaDataAnnotation(&content.ObjectMeta, plan.LockAnnotation, lock)
	}
	_, err := c.cfg.Snapshot.SnapshotV1().VolumeSnapshotContents().Update(ctx, content, metav1.UpdateOptions{})
	return err
}

func (c *Controller) setDeletionPolicy(ctx context.Context, content *snapv1.VolumeSnapshotContent, policy snapv1.DeletionPolicy) error {
	if content.Spec.DeletionPolicy == policy {
		return nil
	}
	content = content.DeepCopy()
	content.Spec.DeletionPolicy = policy
	_, err := c.cfg.Snapshot.SnapshotV1().VolumeSnapshotContents().Update(ctx, content, metav1.UpdateOptions{})
	return err
}

func (c *Controller) setReclaimPolicy(ctx context.Context, pv *v1.PersistentVolume, policy v1.PersistentVolumeReclaimPolicy) error {
	if pv.Spec.PersistentVolumeReclaimPolicy == policy {
		return nil
	}
	pv = pv.DeepCopy()
	pv.Spec.PersistentVolumeReclaimPolicy = policy
	_, err := c.cfg.Kube.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
	return err
}

// owned is the metadata of an object a transfer creates.
func owned(r *transferv1alpha1.StorageTransferRequest, name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Annotations: map[string]string{plan.RequestAnnotation: string(r.UID)}}
}

// targetContent is the pre-provisioned content for the target snapshot:
// the recorded backend snapshot, driver, class, source volume mode and
// volume mode change permission, Retain until the end, and the deletion
// secret the accept named (of the target namespace: the target never
// depends on the source namespace). All from the record: the source
// content may be gone.
func targetContent(r *transferv1alpha1.StorageTransferRequest) *snapv1.VolumeSnapshotContent {
	rec := r.Status.Record
	return contentFor(r, rec.TargetContentName, r.Status.TargetNamespace, r.Spec.TargetName, rec.TargetDeletionSecret)
}

// returnContent is the pre-provisioned content that gives the backend
// snapshot back to the source namespace, with the source's own deletion
// secret.
func returnContent(r *transferv1alpha1.StorageTransferRequest) *snapv1.VolumeSnapshotContent {
	rec := r.Status.Record
	return contentFor(r, plan.ReturnContentName(r), r.Namespace, r.Spec.Source.Name, rec.SourceDeletionSecret)
}

// contentFor is a pre-provisioned content name of the recorded backend
// snapshot for the VolumeSnapshot namespace/snapshot, with the deletion
// secret (namespace/name, "" for none).
func contentFor(r *transferv1alpha1.StorageTransferRequest, name, namespace, snapshot, secret string) *snapv1.VolumeSnapshotContent {
	rec := r.Status.Record
	c := &snapv1.VolumeSnapshotContent{
		ObjectMeta: owned(r, name, ""),
		Spec: snapv1.VolumeSnapshotContentSpec{
			VolumeSnapshotRef: v1.ObjectReference{Kind: "VolumeSnapshot", APIVersion: snapv1.SchemeGroupVersion.String(),
				Namespace: namespace, Name: snapshot},
			DeletionPolicy:   snapv1.VolumeSnapshotContentRetain,
			Driver:           rec.Driver,
			Source:           snapv1.VolumeSnapshotContentSource{SnapshotHandle: ptr.To(rec.SnapshotHandle)},
			SourceVolumeMode: rec.SourceVolumeMode,
		},
	}
	if rec.VolumeSnapshotClassName != "" {
		c.Spec.VolumeSnapshotClassName = ptr.To(rec.VolumeSnapshotClassName)
	}
	if rec.AllowVolumeModeChange != "" {
		c.Annotations[plan.AllowVolumeModeChangeAnnotation] = rec.AllowVolumeModeChange
	}
	if ns, name, ok := strings.Cut(secret, "/"); ok {
		c.Annotations[plan.DeletionSecretNamespaceAnnotation], c.Annotations[plan.DeletionSecretNameAnnotation] = ns, name
	}
	return c
}

// targetSnapshot is the target VolumeSnapshot, bound to the target content.
func targetSnapshot(r *transferv1alpha1.StorageTransferRequest) *snapv1.VolumeSnapshot {
	return snapshotOn(r, r.Status.TargetNamespace, r.Spec.TargetName, r.Status.Record.TargetContentName)
}

// returnSnapshot is the source snapshot created again, bound to the
// return content, locked by the request until the return has ended: no
// other transfer takes it while its content is still Retain.
func returnSnapshot(r *transferv1alpha1.StorageTransferRequest) *snapv1.VolumeSnapshot {
	s := snapshotOn(r, r.Namespace, r.Spec.Source.Name, plan.ReturnContentName(r))
	s.Annotations[plan.LockAnnotation] = string(r.UID)
	return s
}

// snapshotOn is a VolumeSnapshot namespace/name bound to content.
func snapshotOn(r *transferv1alpha1.StorageTransferRequest, namespace, name, content string) *snapv1.VolumeSnapshot {
	rec := r.Status.Record
	s := &snapv1.VolumeSnapshot{
		ObjectMeta: owned(r, name, namespace),
		Spec:       snapv1.VolumeSnapshotSpec{Source: snapv1.VolumeSnapshotSource{VolumeSnapshotContentName: ptr.To(content)}},
	}
	if rec.VolumeSnapshotClassName != "" {
		s.Spec.VolumeSnapshotClassName = ptr.To(rec.VolumeSnapshotClassName)
	}
	return s
}

// returnClaim is the source claim created again: as targetClaim, in the
// source namespace under the source's name, locked (and held) by the
// request until the return has ended: no other transfer takes it while
// its volume is still Retain.
func returnClaim(r *transferv1alpha1.StorageTransferRequest) *v1.PersistentVolumeClaim {
	pvc := targetClaim(r)
	pvc.ObjectMeta = owned(r, r.Spec.Source.Name, r.Namespace)
	pvc.Annotations[plan.LockAnnotation] = string(r.UID)
	pvc.Finalizers = []string{plan.Finalizer}
	return pvc
}

// targetClaim is the target claim: the recorded spec of the source, bound
// to the volume by name. Its data source is cleared: it named objects of
// the source namespace, and the volume has its data. A spec without class
// asks for none (""): left nil, admission would give the claim the default
// StorageClass, which its volume does not have, and it would never bind.
func targetClaim(r *transferv1alpha1.StorageTransferRequest) *v1.PersistentVolumeClaim {
	rec := r.Status.Record
	pvc := &v1.PersistentVolumeClaim{ObjectMeta: owned(r, r.Spec.TargetName, r.Status.TargetNamespace), Spec: *rec.ClaimSpec.DeepCopy()}
	pvc.Spec.VolumeName = rec.VolumeName
	pvc.Spec.DataSource, pvc.Spec.DataSourceRef = nil, nil
	if pvc.Spec.StorageClassName == nil {
		pvc.Spec.StorageClassName = ptr.To("")
	}
	return pvc
}
