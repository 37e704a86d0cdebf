package referencegrant

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
)

// cachedGrant is what the informer stores for a ReferenceGrant of either
// version: the metadata the cache itself needs and the converted Grant.
// Storing it instead of the typed object keeps memory low (no managed
// fields, annotations such as last-applied-configuration, or labels) and
// spares every check a conversion.
type cachedGrant struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Grant Grant
}

// DeepCopyObject makes cachedGrant a runtime.Object, as informers expect.
func (c *cachedGrant) DeepCopyObject() runtime.Object {
	out := &cachedGrant{TypeMeta: c.TypeMeta, Grant: c.Grant}
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Grant.From = slices.Clone(c.Grant.From)
	out.Grant.To = slices.Clone(c.Grant.To)
	return out
}

// toCached is the informer transform: it turns a ReferenceGrant of either
// version into a cachedGrant. It is idempotent, and passes anything else
// (such as cache.DeletedFinalStateUnknown) through.
func toCached(obj any) (any, error) {
	switch rg := obj.(type) {
	case *gatewayv1.ReferenceGrant:
		return newCachedGrant(&rg.ObjectMeta, FromV1(rg)), nil
	case *gatewayv1beta1.ReferenceGrant:
		return newCachedGrant(&rg.ObjectMeta, FromV1beta1(rg)), nil
	default:
		return obj, nil
	}
}

// newCachedGrant keeps from meta only what the cache and its watch need.
func newCachedGrant(meta *metav1.ObjectMeta, g Grant) *cachedGrant {
	return &cachedGrant{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         meta.Namespace,
			Name:              meta.Name,
			UID:               meta.UID,
			ResourceVersion:   meta.ResourceVersion,
			Generation:        meta.Generation,
			CreationTimestamp: meta.CreationTimestamp,
			DeletionTimestamp: meta.DeletionTimestamp,
		},
		Grant: g,
	}
}

// targetIndex names the informer index that maps a target's namespace,
// group and kind to the grants with a To entry for them.
const targetIndex = "referencegrant.xns-csi.io/target"

// indexers are the informer indexers Checker needs.
func indexers() cache.Indexers {
	return cache.Indexers{targetIndex: indexByTarget}
}

// targetKey is the targetIndex key of objects of group and kind in
// namespace. None of the parts can contain a "/", so keys are unambiguous.
func targetKey(namespace, group, kind string) string {
	return namespace + "/" + group + "/" + kind
}

// indexByTarget returns one targetIndex key per distinct group and kind in a
// cached grant's To entries.
func indexByTarget(obj any) ([]string, error) {
	c, ok := obj.(*cachedGrant)
	if !ok {
		return nil, nil
	}
	keys := make([]string, 0, len(c.Grant.To))
	for _, t := range c.Grant.To {
		key := targetKey(c.Grant.Namespace, t.Group, t.Kind)
		if !slices.Contains(keys, key) { // at most 16 To entries
			keys = append(keys, key)
		}
	}
	return keys, nil
}
