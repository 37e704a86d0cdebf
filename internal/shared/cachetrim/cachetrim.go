// Package cachetrim holds the informers' transforms. They keep in the caches
// only the fields the sidecar's decisions read, so that its memory grows with
// the objects it serves rather than with everything in the cluster
// (docs/benchmarks.md has the figures).
//
// Each transform is idempotent and trims the decoded object in place: a
// transform runs once per object version, before the object is cached and
// before any event handler sees it.
package cachetrim

import (
	"maps"
	"strconv"
	"strings"
	"sync"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// Annotations that tell which provisioner serves a claim or made a volume.
const (
	annStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	annBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
	annProvisionedBy          = "pv.kubernetes.io/provisioned-by"
	annMigratedTo             = "pv.kubernetes.io/migrated-to"
)

// Meta drops what no decision reads from any object and no write needs:
// managed fields, often the largest part of an object (an update without
// them leaves them as they are on the server).
//
// Everything else stays, kubectl's last-applied annotation included: the
// controller library writes claims and volumes back from the cache with
// Update (rescheduling a claim, removing a volume's finalizer), and an
// update from a copy without the annotation would erase it, breaking the
// next `kubectl apply` of the object. Objects trimmed further (below) are
// never written back from the cache.
func Meta(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// Core returns the transform of the core informers for the provisioner
// named driver: claims and volumes are trimmed as described below, every
// other object as by Meta.
//
// Claims of this driver (also an in-tree plugin's claim migrated to it:
// its migrated-to annotation names the driver), and claims no provisioner
// was chosen for yet, keep every field but managed fields (see Meta); a claim whose
// dataSourceRef the API server dropped keeps those too, as they are all
// that says it asked for data (datasource.RefDropped). A claim another provisioner serves
// is read only by the "is it mine" tests, as a possible clone source, and by
// source protection, whose finalizer is shared by all provisioners and stays
// while any pending claim restores or clones the source. So it keeps its
// identity, finalizers, provisioner annotation, the in-use annotations of
// sidecars cloning it (datasource.InUseAnnotationPrefix), class, volume
// mode, data source, bound volume and phase; its size, labels and status
// details go.
//
// A volume that names neither driver as its provisioner nor as its CSI
// driver is read only by the controller library's ownership and deletion
// tests, so it keeps what those read: identity, finalizers, the
// provisioned-by and migrated-to annotations, its claim, CSI driver,
// reclaim policy and phase.
func Core(driver string) cache.TransformFunc {
	var shared sharedAnnotations
	return func(obj any) (any, error) {
		switch o := obj.(type) {
		case *v1.PersistentVolumeClaim:
			if name, key := claimProvisioner(o); name != "" && name != driver && o.Annotations[annMigratedTo] != driver {
				trimClaim(o, shared.get(key, name)) // the shared map must not reach Meta
				return o, nil
			}
			if datasource.RefDropped(o) {
				return o, nil // its managed fields are the only trace of the source it asked for
			}
		case *v1.PersistentVolume:
			if !mayBeOurs(o, driver) {
				trimVolume(o)
				return o, nil
			}
		}
		return Meta(obj)
	}
}

func trimClaim(claim *v1.PersistentVolumeClaim, annotations map[string]string) {
	inUse := inUseAnnotations(claim.Annotations)
	claim.ObjectMeta = identity(claim.ObjectMeta)
	claim.Annotations = annotations
	if inUse != nil { // a source being cloned: the claim gets its own map
		maps.Copy(inUse, annotations)
		claim.Annotations = inUse
	}
	claim.Spec = v1.PersistentVolumeClaimSpec{
		VolumeName: claim.Spec.VolumeName, StorageClassName: claim.Spec.StorageClassName, VolumeMode: claim.Spec.VolumeMode,
		DataSource: claim.Spec.DataSource, DataSourceRef: claim.Spec.DataSourceRef,
	}
	claim.Status = v1.PersistentVolumeClaimStatus{Phase: claim.Status.Phase}
}

func trimVolume(pv *v1.PersistentVolume) {
	pv.ObjectMeta = identity(pv.ObjectMeta, annProvisionedBy, annMigratedTo)
	var source v1.PersistentVolumeSource
	if pv.Spec.CSI != nil {
		source.CSI = &v1.CSIPersistentVolumeSource{Driver: pv.Spec.CSI.Driver}
	}
	pv.Spec = v1.PersistentVolumeSpec{
		PersistentVolumeSource: source, ClaimRef: pv.Spec.ClaimRef,
		PersistentVolumeReclaimPolicy: pv.Spec.PersistentVolumeReclaimPolicy, StorageClassName: pv.Spec.StorageClassName,
	}
	pv.Status = v1.PersistentVolumeStatus{Phase: pv.Status.Phase}
}

// Snapshot is the VolumeSnapshot informer's transform: a restore reads the
// bound content, readiness and restore size, and source protection the
// identity, finalizers and the annotations of the sidecars' calls in flight
// (datasource.InUseAnnotationPrefix); nothing else is kept.
func Snapshot(obj any) (any, error) {
	snap, ok := obj.(*snapv1.VolumeSnapshot)
	if !ok {
		return Meta(obj)
	}
	snap.TypeMeta = metav1.TypeMeta{}
	inUse := inUseAnnotations(snap.Annotations)
	snap.ObjectMeta = identity(snap.ObjectMeta)
	snap.Annotations = inUse
	snap.Spec = snapv1.VolumeSnapshotSpec{}
	if s := snap.Status; s != nil {
		snap.Status = &snapv1.VolumeSnapshotStatus{
			BoundVolumeSnapshotContentName: s.BoundVolumeSnapshotContentName, ReadyToUse: s.ReadyToUse, RestoreSize: s.RestoreSize,
		}
	}
	return snap, nil
}

// Content is the VolumeSnapshotContent informer's transform: a restore
// reads the snapshot it is bound to, its driver, handle, restore size and
// source volume mode, and the annotations that allow a mode change.
func Content(obj any) (any, error) {
	content, ok := obj.(*snapv1.VolumeSnapshotContent)
	if !ok {
		return Meta(obj)
	}
	content.TypeMeta = metav1.TypeMeta{}
	content.ObjectMeta = identity(content.ObjectMeta, datasource.AllowVolumeModeChangeAnnotations...)
	ref := content.Spec.VolumeSnapshotRef
	content.Spec = snapv1.VolumeSnapshotContentSpec{
		VolumeSnapshotRef: v1.ObjectReference{Namespace: ref.Namespace, Name: ref.Name, UID: ref.UID},
		Driver:            content.Spec.Driver, SourceVolumeMode: content.Spec.SourceVolumeMode,
	}
	if s := content.Status; s != nil {
		content.Status = &snapv1.VolumeSnapshotContentStatus{SnapshotHandle: s.SnapshotHandle, RestoreSize: s.RestoreSize}
	}
	return content, nil
}

// maxSharedAnnotations bounds the provisioner names sharedAnnotations
// interns. The annotation's value is written by whoever creates or edits a
// claim, so an unbounded table would let any claim author grow the sidecar's
// memory without limit (and its OOM restart would cost everyone). Real
// clusters run a handful of provisioners; claims naming more get a map of
// their own, which goes with the claim.
const maxSharedAnnotations = 64

// sharedAnnotations hands out one annotation map per provisioner for the
// trimmed claims of that provisioner, instead of one per claim. Cached
// objects are read-only, so they can share it.
type sharedAnnotations struct {
	mu   sync.Mutex
	maps map[[2]string]map[string]string
}

func (s *sharedAnnotations) get(key, value string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := [2]string{key, value}
	if m, ok := s.maps[k]; ok {
		return m
	}
	m := map[string]string{key: value}
	if len(s.maps) >= maxSharedAnnotations {
		return m
	}
	if s.maps == nil {
		s.maps = map[[2]string]map[string]string{}
	}
	s.maps[k] = m
	return m
}

// claimProvisioner returns the provisioner a claim was handed to and the
// annotation that says so, as the PV controller and the library read them.
func claimProvisioner(c *v1.PersistentVolumeClaim) (name, key string) {
	if name, ok := c.Annotations[annStorageProvisioner]; ok {
		return name, annStorageProvisioner
	}
	return c.Annotations[annBetaStorageProvisioner], annBetaStorageProvisioner
}

// mayBeOurs tells whether driver made pv or could be asked to delete or
// clone it: when an annotation or the CSI source names driver.
func mayBeOurs(pv *v1.PersistentVolume, driver string) bool {
	by, migrated := pv.Annotations[annProvisionedBy], pv.Annotations[annMigratedTo]
	csi := ""
	if pv.Spec.CSI != nil {
		csi = pv.Spec.CSI.Driver
	}
	return by == driver || migrated == driver || csi == driver
}

// The bounds of the in-use marks a trimmed object keeps: the cache holds
// every snapshot of the cluster, and whoever may annotate one may write
// marks of any size and number (up to the API server's 256 KiB).
const (
	// maxInUseValue is the longest mark value kept: a sidecar writes an
	// RFC 3339 time (35 bytes at most); a longer value is not a sidecar's.
	maxInUseValue = 64
	// maxInUseMarks is how many marks an object keeps; with more, it keeps
	// inUseOverflow instead, which holds the source as an unreadable mark
	// does: marks beyond the bound cannot be told apart from real ones.
	maxInUseMarks = 16
)

// inUseOverflow is the mark kept in place of more than maxInUseMarks.
const inUseOverflow = datasource.InUseAnnotationPrefix + "overflow"

// inUseAnnotations returns a copy of the annotations with which sidecar
// processes say a CreateVolume may be reading the object (source
// protection reads them on every snapshot and claim), nil when there are
// none, within the bounds above.
func inUseAnnotations(annotations map[string]string) map[string]string {
	var out map[string]string
	for k, v := range annotations {
		if strings.HasPrefix(k, datasource.InUseAnnotationPrefix) && len(v) <= maxInUseValue {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	if len(out) > maxInUseMarks {
		return map[string]string{inUseOverflow: "more than " + strconv.Itoa(maxInUseMarks) + " marks"}
	}
	return out
}

// identity keeps of m what identifies and guards the object (name,
// namespace, UID, resourceVersion, creation and deletion, finalizers) and
// the annotations named by keep.
func identity(m metav1.ObjectMeta, keep ...string) metav1.ObjectMeta {
	out := metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp, Finalizers: m.Finalizers,
	}
	for _, k := range keep {
		if v, ok := m.Annotations[k]; ok {
			if out.Annotations == nil {
				out.Annotations = make(map[string]string, len(keep))
			}
			out.Annotations[k] = v
		}
	}
	return out
}
