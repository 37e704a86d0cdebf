package referencegrant

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
)

// The KEP-3294 example: Alice lets PersistentVolumeClaims in "test" use the
// VolumeSnapshot "foo-backup" in "prod" with the ReferenceGrant "bar".
const (
	snapshotGroup = "snapshot.storage.k8s.io"
	snapshotKind  = "VolumeSnapshot"
	claimKind     = "PersistentVolumeClaim"
)

// claimUsesSnapshot is the reference of the KEP example; options change it.
func claimUsesSnapshot(opts ...func(*Reference)) Reference {
	ref := Reference{
		FromGroup: "", FromKind: claimKind, FromNamespace: "test",
		ToGroup: snapshotGroup, ToKind: snapshotKind, ToNamespace: "prod", ToName: "foo-backup",
	}
	for _, o := range opts {
		o(&ref)
	}
	return ref
}

// grant builds a Grant named bar in prod; options add entries or move it.
func grant(opts ...func(*Grant)) Grant {
	g := Grant{Namespace: "prod", Name: "bar"}
	for _, o := range opts {
		o(&g)
	}
	return g
}

func terminating(g *Grant)               { g.Terminating = true }
func named(name string) func(*Grant)     { return func(g *Grant) { g.Name = name } }
func inNamespace(ns string) func(*Grant) { return func(g *Grant) { g.Namespace = ns } }
func from(group, kind, ns string) func(*Grant) {
	return func(g *Grant) { g.From = append(g.From, From{Group: group, Kind: kind, Namespace: ns}) }
}
func to(group, kind, name string) func(*Grant) {
	return func(g *Grant) { g.To = append(g.To, To{Group: group, Kind: kind, Name: name}) }
}

// claimsFromTest and fooBackup are the entries of the KEP example grant.
var (
	claimsFromTest = from("", claimKind, "test")
	fooBackup      = to(snapshotGroup, snapshotKind, "foo-backup")
	everySnapshot  = to(snapshotGroup, snapshotKind, "")
)

// v1Grant is g as a gateway.networking.k8s.io/v1 object.
func v1Grant(g Grant) *gatewayv1.ReferenceGrant {
	rg := &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: g.Namespace, Name: g.Name}}
	for _, f := range g.From {
		rg.Spec.From = append(rg.Spec.From, gatewayv1.ReferenceGrantFrom{
			Group: gatewayv1.Group(f.Group), Kind: gatewayv1.Kind(f.Kind), Namespace: gatewayv1.Namespace(f.Namespace),
		})
	}
	for _, t := range g.To {
		to := gatewayv1.ReferenceGrantTo{Group: gatewayv1.Group(t.Group), Kind: gatewayv1.Kind(t.Kind)}
		if t.Name != "" {
			name := gatewayv1.ObjectName(t.Name)
			to.Name = &name
		}
		rg.Spec.To = append(rg.Spec.To, to)
	}
	return rg
}

// v1beta1Grant is g as a gateway.networking.k8s.io/v1beta1 object.
func v1beta1Grant(g Grant) *gatewayv1beta1.ReferenceGrant {
	return (*gatewayv1beta1.ReferenceGrant)(v1Grant(g))
}
