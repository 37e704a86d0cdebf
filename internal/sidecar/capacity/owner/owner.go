// Package owner finds the owner of the CSIStorageCapacity objects: the
// sidecar's pod or, levels up its chain of controllers, e.g. its StatefulSet
// (level 1) or Deployment (level 2), as upstream's --capacity-ownerref-level
// defines it. The garbage collector then deletes the objects with that
// owner, when the driver is uninstalled.
//
// Resolve walks the chain over a Getter; NewGetter reads any kind through
// discovery and the API server's REST paths, so owners of any kind (an
// operator's custom resource too) can be walked. RBAC must allow get on
// every object read: the pod (levels 0 and up) and each owner below the
// level's (level 2: the ReplicaSet). Like upstream, the owner at the level
// asked for is not read when its reference is known, so level 1 needs get
// on pods only.
package owner

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Ref names an object to read.
type Ref struct {
	APIVersion, Kind, Namespace, Name string
}

// Getter reads an object's metadata.
type Getter interface {
	Get(ctx context.Context, ref Ref) (*metav1.ObjectMeta, error)
}

// Resolve returns the owner reference for the objects of the sidecar running
// in pod podName of namespace: the pod itself at level 0, its controller at
// level 1, that one's controller at level 2, and so on; nil for a negative
// level (no owner). The reference names the object's API version, kind,
// name and UID and is a controller reference.
func Resolve(ctx context.Context, g Getter, namespace, podName string, level int) (*metav1.OwnerReference, error) {
	if level < 0 {
		return nil, nil
	}
	ref := Ref{APIVersion: "v1", Kind: "Pod", Namespace: namespace, Name: podName}
	for {
		meta, err := g.Get(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("read %s %s/%s on the way to the owner of CSIStorageCapacity objects: %w", ref.Kind, ref.Namespace, ref.Name, err)
		}
		if level == 0 {
			return controllerRef(ref.APIVersion, ref.Kind, ref.Name, meta.UID), nil
		}
		owner := metav1.GetControllerOfNoCopy(meta)
		if owner == nil {
			return nil, fmt.Errorf("%s %s/%s has no controller, so the owner of CSIStorageCapacity objects cannot be %d more level(s) up", ref.Kind, ref.Namespace, ref.Name, level)
		}
		if level == 1 {
			// Known without reading it, which saves the RBAC rule to get it.
			return controllerRef(owner.APIVersion, owner.Kind, owner.Name, owner.UID), nil
		}
		ref = Ref{APIVersion: owner.APIVersion, Kind: owner.Kind, Namespace: namespace, Name: owner.Name}
		level--
	}
}

func controllerRef(apiVersion, kind, name string, uid types.UID) *metav1.OwnerReference {
	controller := true
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: &controller}
}

// NewGetter returns a Getter that finds a kind's resource by discovery and
// reads the object's metadata as JSON with client's credentials and rate
// limit.
func NewGetter(client kubernetes.Interface) Getter {
	return restGetter{discovery: discovery.ToDiscoveryInterfaceWithContext(client.Discovery()), rest: client.Discovery().RESTClient()}
}

type restGetter struct {
	discovery discovery.DiscoveryInterfaceWithContext
	rest      rest.Interface
}

// Get implements Getter.
func (g restGetter) Get(ctx context.Context, ref Ref) (*metav1.ObjectMeta, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("parse API version %q: %w", ref.APIVersion, err)
	}
	resources, err := g.discovery.ServerResourcesForGroupVersionWithContext(ctx, ref.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("discover the resources of %s: %w", ref.APIVersion, err)
	}
	var resource *metav1.APIResource
	for i, r := range resources.APIResources {
		if r.Kind == ref.Kind && !strings.Contains(r.Name, "/") {
			resource = &resources.APIResources[i]
			break
		}
	}
	if resource == nil {
		return nil, fmt.Errorf("%s serves no resource of kind %s", ref.APIVersion, ref.Kind)
	}
	p := "/apis/" + gv.String()
	if gv.Group == "" {
		p = "/api/" + gv.Version
	}
	if resource.Namespaced {
		p = path.Join(p, "namespaces", ref.Namespace)
	}
	raw, err := g.rest.Get().AbsPath(p, resource.Name, ref.Name).SetHeader("Accept", "application/json").Do(ctx).Raw()
	if err != nil {
		return nil, fmt.Errorf("get %s %s: %w", resource.Name, ref.Name, err)
	}
	var obj metav1.PartialObjectMetadata
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("decode %s %s: %w", resource.Name, ref.Name, err)
	}
	return &obj.ObjectMeta, nil
}

// Lookup is Resolve with NewGetter(client).
func Lookup(ctx context.Context, client kubernetes.Interface, namespace, podName string, level int) (*metav1.OwnerReference, error) {
	return Resolve(ctx, NewGetter(client), namespace, podName, level)
}
