package referencegrant

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
)

// cachedGrant is what the informer stores for a ReferenceGrant of either
// version: the converted Grant and the version it was read at. Storing it
// instead of the typed object keeps memory low (no object metadata beyond
// what identifies the grant: about a fifth of the typed object's bytes
// after the informer's decode, docs/benchmarks.md) and spares every check a
// conversion. Informers read its namespace and name through GetObjectMeta.
type cachedGrant struct {
	Grant Grant
	// ResourceVersion is the grant's resourceVersion when it was read.
	ResourceVersion string
}

// GetObjectKind makes cachedGrant a runtime.Object; it has no kind of its
// own.
func (c *cachedGrant) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject makes cachedGrant a runtime.Object, as informers expect.
func (c *cachedGrant) DeepCopyObject() runtime.Object {
	out := &cachedGrant{Grant: c.Grant, ResourceVersion: c.ResourceVersion}
	out.Grant.From = slices.Clone(c.Grant.From)
	out.Grant.To = slices.Clone(c.Grant.To)
	return out
}

// GetObjectMeta gives meta.Accessor, and so the informer's key and
// namespace index, the grant's namespace, name and resourceVersion.
func (c *cachedGrant) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: c.Grant.Namespace, Name: c.Grant.Name, ResourceVersion: c.ResourceVersion}
}

// toCached is the informer transform: it turns a ReferenceGrant of either
// version into a cachedGrant. It is idempotent, and passes anything else
// (such as cache.DeletedFinalStateUnknown) through.
func toCached(obj any) (any, error) {
	switch rg := obj.(type) {
	case *gatewayv1.ReferenceGrant:
		return &cachedGrant{Grant: FromV1(rg), ResourceVersion: rg.ResourceVersion}, nil
	case *gatewayv1beta1.ReferenceGrant:
		return &cachedGrant{Grant: FromV1beta1(rg), ResourceVersion: rg.ResourceVersion}, nil
	default:
		return obj, nil
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
