// Package sourceusetest fills the caches a sourceuse.Finder reads, for the
// tests of its users (source protection, the webhook's DELETE guard).
package sourceusetest

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/requeue"
)

// Caches returns a claim indexer with requeue.SourceIndex holding claims,
// and a PV lister holding PVs of the names volumes.
func Caches(t *testing.T, claims []*v1.PersistentVolumeClaim, volumes ...string) (cache.Indexer, corelisters.PersistentVolumeLister) {
	t.Helper()
	claimIndex := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{requeue.SourceIndex: requeue.IndexBySource})
	for _, c := range claims {
		if err := claimIndex.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	volumeIndex := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, name := range volumes {
		if err := volumeIndex.Add(&v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	return claimIndex, corelisters.NewPersistentVolumeLister(volumeIndex)
}
