package snapshotwebhook

import (
	"fmt"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	snapclientset "github.com/kubernetes-csi/external-snapshotter/client/v8/clientset/versioned"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/optionalapi"
)

// SnapshotMetadata reads which VolumeSnapshots exist and their finalizers:
// the held-snapshot gauges count a snapshot only if it exists and carries
// the protection finalizer of a use (its restore has begun). Admission
// needs none of it: a DELETE brings its snapshot.
type SnapshotMetadata interface {
	// SnapshotMeta returns the snapshot namespace/name as cached (its
	// metadata only) and whether it exists; an error when the cache
	// cannot be read.
	SnapshotMeta(namespace, name string) (*snapv1.VolumeSnapshot, bool, error)
}

// snapshotMetadataCache is a SnapshotMetadata on an informer that keeps
// each snapshot's name, namespace, UID and finalizers only.
type snapshotMetadataCache struct {
	api *optionalapi.API
}

func newSnapshotMetadataCache(client snapclientset.Interface, disc discovery.DiscoveryInterface) *snapshotMetadataCache {
	return &snapshotMetadataCache{api: optionalapi.New(optionalapi.Config{
		Name: "VolumeSnapshot", Discovery: disc,
		Candidates: []optionalapi.Candidate{{GroupVersion: snapv1.SchemeGroupVersion, Resource: "volumesnapshots", Object: &snapv1.VolumeSnapshot{},
			ListWatch: func() *cache.ListWatch {
				snapshots := client.SnapshotV1().VolumeSnapshots(metav1.NamespaceAll)
				return optionalapi.NewListWatch(snapshots.List, snapshots.Watch)
			}}},
		Transform:    snapshotFinalizersOnly,
		WhileRefused: "the DELETE guard's held-snapshot gauges say nothing (admission does not need the cache)",
	})}
}

// snapshotFinalizersOnly is the transform of the guard's snapshot cache.
func snapshotFinalizersOnly(obj any) (any, error) {
	snap, ok := obj.(*snapv1.VolumeSnapshot)
	if !ok {
		return obj, nil // a tombstone
	}
	return &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: snap.Namespace, Name: snap.Name, UID: snap.UID,
		ResourceVersion: snap.ResourceVersion, Finalizers: snap.Finalizers}}, nil
}

func (c *snapshotMetadataCache) SnapshotMeta(namespace, name string) (*snapv1.VolumeSnapshot, bool, error) {
	inf, _, err := c.api.Informer()
	if err != nil {
		return nil, false, err
	}
	obj, ok, err := inf.GetStore().GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return nil, false, err
	}
	snap, ok := obj.(*snapv1.VolumeSnapshot)
	if !ok {
		return nil, false, fmt.Errorf("the snapshot cache holds a %T", obj)
	}
	return snap, true, nil
}

// APIStatus reports whether the cache can be read, for the gauges.
func (c *snapshotMetadataCache) APIStatus() []optionalapi.Status {
	return []optionalapi.Status{c.api.Status()}
}
