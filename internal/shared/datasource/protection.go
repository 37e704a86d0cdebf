package datasource

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The finalizers that keep a source from being deleted while a volume is
// provisioned from it, one for each way a claim can name the source. The
// first two are the upstream csi-provisioner's, shared by every provisioner
// that restores or clones the object; the others are this provisioner's
// own, for the uses the sharers cannot see or judge.
const (
	// SnapshotFinalizer protects a VolumeSnapshot being restored.
	SnapshotFinalizer = "provisioner.storage.kubernetes.io/volumesnapshot-as-source-protection"
	// CloneFinalizer protects a PersistentVolumeClaim being cloned.
	CloneFinalizer = "provisioner.storage.kubernetes.io/cloning-protection"
	// LinkSnapshotFinalizer protects a VolumeSnapshot being restored
	// through a VolumeSnapshotLink. It is not SnapshotFinalizer because
	// the provisioners that share that one and do not follow links (the
	// upstream csi-provisioner, this one without --cross-namespace-snapshot)
	// would see no claim using the snapshot and take it off in the middle
	// of the restore.
	LinkSnapshotFinalizer = "provisioner.storage.kubernetes.io/volumesnapshotlink-as-source-protection"
	// CrossNamespaceSnapshotFinalizer protects a VolumeSnapshot being
	// restored by a claim that names its namespace in
	// spec.dataSourceRef.namespace (KEP-3294), and CrossNamespaceCloneFinalizer
	// a PersistentVolumeClaim being cloned so. Such a claim's
	// spec.dataSource is empty: the upstream csi-provisioner's
	// cloning-protection controller counts only the clones in the source's
	// namespace, and a sidecar with the CrossNamespaceSourceProvisioning
	// gate off would judge the claim as never provisioned. Either would
	// take a shared finalizer off in the middle of the restore or clone;
	// they leave these alone.
	CrossNamespaceSnapshotFinalizer = "provisioner.storage.kubernetes.io/cross-namespace-volumesnapshot-as-source-protection"
	CrossNamespaceCloneFinalizer    = "provisioner.storage.kubernetes.io/cross-namespace-cloning-protection"
)

// Finalizers are the protection finalizers of every use, for checks that a
// source carries none (or which).
var Finalizers = []string{SnapshotFinalizer, CrossNamespaceSnapshotFinalizer, LinkSnapshotFinalizer,
	CloneFinalizer, CrossNamespaceCloneFinalizer}

// InUseAnnotationPrefix prefixes the annotations with which a sidecar
// process says, on a source it protects, that a CreateVolume of its own
// may be reading the source: InUseAnnotationPrefix + the process's holder
// name, valued with the time until which it holds (RFC 3339), renewed while
// the call may run. Only that process knows its calls in flight; every
// other process (another node's with --node-deployment, another driver's)
// keeps the source's finalizers while such an annotation has not expired.
const InUseAnnotationPrefix = "in-use.provisioner.storage.kubernetes.io/"

// Finalizer is the protection finalizer of the source's kind and use
// (directly, through spec.dataSourceRef.namespace, through a link), ""
// for kinds the provisioner does not read.
func (s Source) Finalizer() string {
	switch s.Type() {
	case Snapshot:
		switch {
		case s.ThroughLink:
			return LinkSnapshotFinalizer
		case s.ExplicitNamespace:
			return CrossNamespaceSnapshotFinalizer
		}
		return SnapshotFinalizer
	case Claim:
		if s.ExplicitNamespace {
			return CrossNamespaceCloneFinalizer
		}
		return CloneFinalizer
	}
	return ""
}

// Uses returns every use of the object s names, one for each protection
// finalizer of its kind: named in the claim's own namespace, with
// spec.dataSourceRef.namespace, and, for a snapshot, through links; nil
// for kinds the provisioner does not read.
func (s Source) Uses() []Source {
	plain := s.Target()
	explicit := plain
	explicit.ExplicitNamespace = true
	switch plain.Type() {
	case Snapshot:
		linked := plain
		linked.ThroughLink = true
		return []Source{plain, explicit, linked}
	case Claim:
		return []Source{plain, explicit}
	}
	return nil
}

// DeletionOrder orders a claim's creation against a source's deletion
// request within the second their timestamps share: the API keeps
// creationTimestamp and deletionTimestamp in whole seconds (package
// deletionorder keeps such an order from what a process saw arrive).
type DeletionOrder interface {
	// CreatedAfterDeletion reports whether claim (or the
	// VolumeSnapshotLink a claim restores through) was created after the
	// deletion of source was requested; known is false when it cannot
	// tell.
	CreatedAfterDeletion(claim, source metav1.Object) (after, known bool)
}

// ServesDespiteDeletion reports whether a source object whose deletion has
// been requested still serves claim: its deletion waits for finalizer, and
// the claim already existed when the deletion was requested. The finalizer
// promises that claims in progress finish, also across a restart of the
// sidecar that lost track of which attempt had started; a claim created
// after the deletion request may not start a new use of the source. An
// object that is not being deleted serves every claim.
//
// A claim created in the second of the deletion request is ordered by
// order; when order is nil or cannot tell, it counts as created first (a
// restarted sidecar keeps the promise to the claims it may have started).
func ServesDespiteDeletion(source metav1.Object, finalizer string, claim metav1.Object, order DeletionOrder) bool {
	deletion := source.GetDeletionTimestamp()
	if deletion == nil {
		return true
	}
	if !slices.Contains(source.GetFinalizers(), finalizer) {
		return false
	}
	created := claim.GetCreationTimestamp()
	switch {
	case created.Before(deletion):
		return true
	case created.After(deletion.Time):
		return false
	}
	if order != nil {
		if after, known := order.CreatedAfterDeletion(claim, source); known {
			return !after
		}
	}
	return true
}

// ServesUseDespiteDeletion is ServesDespiteDeletion for a use that several
// objects make together: a restore through a VolumeSnapshotLink is made
// by the claim and the link, and a source being deleted serves it only
// when it serves each of them, that is when the later of their creations
// preceded the deletion request. Else an old claim naming a link created
// (or deleted and re-created, a new object) after the request would start
// a new restore from the source. Each object created in the second of the
// request is ordered as ServesDespiteDeletion orders a claim.
func ServesUseDespiteDeletion(source metav1.Object, finalizer string, order DeletionOrder, users ...metav1.Object) bool {
	for _, u := range users {
		if !ServesDespiteDeletion(source, finalizer, u, order) {
			return false
		}
	}
	return true
}

// AllowVolumeModeChangeAnnotations mark a VolumeSnapshotContent whose
// snapshot may be restored with another volume mode than its source had.
// The first is the external-snapshotter's spelling, the second the one this
// project's issues use; either set to "true" allows the change.
var AllowVolumeModeChangeAnnotations = []string{
	"snapshot.storage.kubernetes.io/allow-volume-mode-change",
	"snapshot.storage.k8s.io/allow-volume-mode-change",
}
