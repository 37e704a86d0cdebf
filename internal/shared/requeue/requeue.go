// Package requeue makes provisioning event-driven: a claim that waits for a
// ReferenceGrant, a snapshot or a clone source is put back on the
// provisioning queue the moment that object changes, instead of after the
// controller's retry backoff (up to minutes in the upstream provisioner).
//
// It wraps the PVC informer handed to the ProvisionController to capture the
// controller's own event handler, and indexes pending claims by what they
// wait for. Re-queueing a claim is then an index lookup and a call to that
// handler, which adds the claim to the controller's work queue at once.
package requeue

import (
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// SourceIndex is the name of the claim index this package adds.
const SourceIndex = "waiting-for"

// SourceKey is the index key of claims restoring or cloning src.
func SourceKey(src datasource.Source) string {
	return src.Kind + "/" + src.Namespace + "/" + src.Name
}

// GrantKey is the index key of claims that need a ReferenceGrant in
// namespace.
func GrantKey(namespace string) string { return "grant/" + namespace }

// IndexBySource is the informer index function: a pending claim is indexed
// under its snapshot or clone source and, when it names the namespace
// explicitly, under the namespace whose grants it needs.
func IndexBySource(obj any) ([]string, error) {
	claim, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok || claim.Spec.VolumeName != "" {
		return nil, nil
	}
	src, err := datasource.Resolve(claim)
	if err != nil {
		return nil, nil
	}
	var keys []string
	switch src.Type() {
	case datasource.Snapshot, datasource.Claim, datasource.Link:
		keys = append(keys, SourceKey(src))
	}
	if src.NeedsGrant() {
		keys = append(keys, GrantKey(src.Namespace))
	}
	return keys, nil
}

// Claims is the PVC informer shared with the ProvisionController. It
// behaves as the informer it wraps and, in addition, can re-queue claims.
type Claims struct {
	cache.SharedIndexInformer
	mu       sync.RWMutex
	handlers []cache.ResourceEventHandler
	links    LinkIndex
}

// LinkIndex finds VolumeSnapshotLinks by the snapshot they name (see
// package linkcache): a claim restoring through a link waits for the
// link's snapshot and for the grants of the snapshot's namespace.
type LinkIndex interface {
	LinksTo(namespace, name string) ([]*snapv1alpha1.VolumeSnapshotLink, error)
	LinksInto(namespace string) ([]*snapv1alpha1.VolumeSnapshotLink, error)
}

// SetLinks makes snapshot and grant events re-queue the claims restoring
// through links as well. Call it before the informers start.
func (c *Claims) SetLinks(links LinkIndex) { c.links = links }

// ParseLinkKey returns the namespace and name of the link in a LinkKey, and
// false for any other index key.
func ParseLinkKey(key string) (namespace, name string, ok bool) {
	rest, ok := strings.CutPrefix(key, datasource.LinkKind+"/")
	if !ok {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(rest, "/")
	return namespace, name, ok
}

// LinkKey is the index key of claims restoring through the
// VolumeSnapshotLink namespace/name.
func LinkKey(namespace, name string) string {
	return SourceKey(datasource.Source{APIGroup: datasource.SnapshotGroup, Kind: datasource.LinkKind, Namespace: namespace, Name: name})
}

// requeueLinks re-queues the claims restoring through links.
func (c *Claims) requeueLinks(links []*snapv1alpha1.VolumeSnapshotLink, err error) int {
	n := 0
	if err != nil {
		return 0 // the link cache cannot be read: LinksSynced re-queues them
	}
	for _, l := range links {
		n += c.Requeue(LinkKey(l.Namespace, l.Name))
	}
	return n
}

// NewClaims wraps inf and adds the source index to it. Call it before the
// informer starts.
func NewClaims(inf cache.SharedIndexInformer) (*Claims, error) {
	if err := inf.AddIndexers(cache.Indexers{SourceIndex: IndexBySource}); err != nil {
		return nil, err
	}
	return &Claims{SharedIndexInformer: inf}, nil
}

// AddEventHandler registers h with the informer and remembers it.
func (c *Claims) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	c.remember(h)
	return c.SharedIndexInformer.AddEventHandler(h)
}

// AddEventHandlerWithResyncPeriod registers h with the informer and
// remembers it; the ProvisionController uses this one for custom informers.
func (c *Claims) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, resync time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	c.remember(h)
	return c.SharedIndexInformer.AddEventHandlerWithResyncPeriod(h, resync)
}

func (c *Claims) remember(h cache.ResourceEventHandler) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.handlers = append(c.handlers, h)
}

// Requeue re-queues every pending claim indexed under key and returns how
// many there were.
func (c *Claims) Requeue(key string) int {
	objs, err := c.GetIndexer().ByIndex(SourceIndex, key)
	if err != nil || len(objs) == 0 {
		return 0
	}
	claims := make([]*v1.PersistentVolumeClaim, 0, len(objs))
	for _, obj := range objs {
		if claim, ok := obj.(*v1.PersistentVolumeClaim); ok {
			claims = append(claims, claim)
		}
	}
	c.requeue(claims)
	return len(claims)
}

// RequeueAfter re-queues the claim after d, with the informer's copy of it
// then; nothing happens when the claim is gone by then.
func (c *Claims) RequeueAfter(claim *v1.PersistentVolumeClaim, d time.Duration) {
	key, err := cache.MetaNamespaceKeyFunc(claim)
	if err != nil {
		return
	}
	time.AfterFunc(d, func() {
		obj, exists, err := c.GetIndexer().GetByKey(key)
		if current, ok := obj.(*v1.PersistentVolumeClaim); ok && exists && err == nil && current.UID == claim.UID {
			c.requeue([]*v1.PersistentVolumeClaim{current})
		}
	})
}

// requeue hands the claims to the registered handlers as updates.
func (c *Claims) requeue(claims []*v1.PersistentVolumeClaim) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, claim := range claims {
		for _, h := range c.handlers {
			h.OnUpdate(claim, claim)
		}
	}
}

// GrantsChanged re-queues the claims waiting on grants in namespace, or on
// grants anywhere when namespace is "" (the grant cache just became usable).
func (c *Claims) GrantsChanged(namespace string) int {
	claims := GrantWaiters(c.GetIndexer(), namespace)
	c.requeue(claims)
	n := len(claims)
	switch {
	case c.links == nil:
	case namespace == "":
		n += c.LinksSynced()
	default:
		n += c.requeueLinks(c.links.LinksInto(namespace))
	}
	return n
}

// LinksSynced re-queues every claim restoring through a link: the link
// cache just became usable.
func (c *Claims) LinksSynced() int {
	return c.requeuePrefix(datasource.LinkKind + "/")
}

// GrantWaiters returns the pending claims in indexer (which has SourceIndex)
// that need a ReferenceGrant in namespace, or in any namespace when
// namespace is "".
func GrantWaiters(indexer cache.Indexer, namespace string) []*v1.PersistentVolumeClaim {
	keys := []string{GrantKey(namespace)}
	if namespace == "" {
		keys = slices.DeleteFunc(indexer.ListIndexFuncValues(SourceIndex), func(k string) bool { return !strings.HasPrefix(k, GrantKey("")) })
	}
	var claims []*v1.PersistentVolumeClaim
	for _, key := range keys {
		objs, _ := indexer.ByIndex(SourceIndex, key)
		for _, obj := range objs {
			if claim, ok := obj.(*v1.PersistentVolumeClaim); ok {
				claims = append(claims, claim)
			}
		}
	}
	return claims
}

// SnapshotsSynced re-queues every claim restoring a snapshot: the snapshot
// cache just became usable, and claims refused while it was not must not
// wait for their retry backoff.
func (c *Claims) SnapshotsSynced() int {
	n := c.requeuePrefix(datasource.SnapshotKind + "/")
	if c.links != nil {
		n += c.LinksSynced()
	}
	return n
}

// requeuePrefix re-queues the claims under every index key with prefix.
func (c *Claims) requeuePrefix(prefix string) int {
	n := 0
	for _, key := range c.GetIndexer().ListIndexFuncValues(SourceIndex) {
		if strings.HasPrefix(key, prefix) {
			n += c.Requeue(key)
		}
	}
	return n
}
