package referencegrant

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// Reference is one requested cross-namespace access: an object of FromKind
// in FromNamespace wants to use the object ToName of ToKind in ToNamespace.
// Groups are API groups without version; the core group is "".
type Reference struct {
	FromGroup, FromKind, FromNamespace   string
	ToGroup, ToKind, ToNamespace, ToName string
}

// Grant is a ReferenceGrant reduced to what decisions read, independent of
// its API version.
type Grant struct {
	// Namespace and Name identify the ReferenceGrant; it grants access to
	// objects in Namespace only.
	Namespace, Name string
	// From lists who may refer; any entry may match.
	From []From
	// To lists what may be referred to; any entry may match.
	To []To
	// Terminating is true once the ReferenceGrant has a deletionTimestamp
	// (its deletion waits for a finalizer, e.g. of a GitOps tool). Its owner
	// has withdrawn it: a terminating grant allows nothing.
	Terminating bool
}

// From is one trusted source of references: objects of Kind in Group, in
// Namespace.
type From struct {
	Group, Kind, Namespace string
}

// To is one allowed target of references: the object Name of Kind in Group,
// or every object of that kind if Name is "".
type To struct {
	Group, Kind, Name string
}

// FromV1 converts a gateway.networking.k8s.io/v1 ReferenceGrant.
func FromV1(rg *gatewayv1.ReferenceGrant) Grant {
	if rg == nil {
		return Grant{}
	}
	g := Grant{
		Namespace:   rg.Namespace,
		Name:        rg.Name,
		Terminating: rg.DeletionTimestamp != nil,
		From:        make([]From, 0, len(rg.Spec.From)),
		To:          make([]To, 0, len(rg.Spec.To)),
	}
	for _, f := range rg.Spec.From {
		g.From = append(g.From, From{Group: string(f.Group), Kind: string(f.Kind), Namespace: string(f.Namespace)})
	}
	for _, t := range rg.Spec.To {
		to := To{Group: string(t.Group), Kind: string(t.Kind)}
		if t.Name != nil {
			to.Name = string(*t.Name)
		}
		g.To = append(g.To, to)
	}
	return g
}

// FromV1beta1 converts a gateway.networking.k8s.io/v1beta1 ReferenceGrant,
// whose schema is the same as v1's.
func FromV1beta1(rg *gatewayv1beta1.ReferenceGrant) Grant {
	return FromV1((*gatewayv1.ReferenceGrant)(rg))
}

// Allows reports whether g allows ref: g must live in the referenced
// object's namespace, one From entry must match the referrer's group, kind
// and namespace exactly, and one To entry must match the target's group and
// kind and either name the target or name nothing (every object of that
// kind). From and To entries are matched independently, as the Gateway API
// specifies. A terminating grant allows nothing.
func Allows(g Grant, ref Reference) bool {
	if g.Terminating || g.Namespace != ref.ToNamespace {
		return false
	}
	return allowsFrom(g.From, ref) && allowsTo(g.To, ref)
}

func allowsFrom(from []From, ref Reference) bool {
	for _, f := range from {
		if f.Group == ref.FromGroup && f.Kind == ref.FromKind && f.Namespace == ref.FromNamespace {
			return true
		}
	}
	return false
}

func allowsTo(to []To, ref Reference) bool {
	for _, t := range to {
		if t.Group == ref.ToGroup && t.Kind == ref.ToKind && (t.Name == "" || t.Name == ref.ToName) {
			return true
		}
	}
	return false
}

// ClaimReference is the access a PersistentVolumeClaim in claimNamespace
// asks for when its data source names an object in another namespace
// (KEP-3294): from {group "", kind PersistentVolumeClaim, namespace
// claimNamespace} to that object.
func ClaimReference(claimNamespace, toGroup, toKind, toNamespace, toName string) Reference {
	return Reference{
		FromGroup: "", FromKind: "PersistentVolumeClaim", FromNamespace: claimNamespace,
		ToGroup: toGroup, ToKind: toKind, ToNamespace: toNamespace, ToName: toName,
	}
}

// LinkReference is the access a VolumeSnapshotLink in linkNamespace asks
// for when it names the VolumeSnapshot snapshotNamespace/snapshotName in
// another namespace (KEP-3294, "Example flow of how VolumeSnapshotLink API
// works"): from {group snapshot.storage.k8s.io, kind VolumeSnapshotLink,
// namespace linkNamespace} to that VolumeSnapshot.
func LinkReference(linkNamespace, snapshotNamespace, snapshotName string) Reference {
	return Reference{
		FromGroup: datasource.SnapshotGroup, FromKind: datasource.LinkKind, FromNamespace: linkNamespace,
		ToGroup: datasource.SnapshotGroup, ToKind: datasource.SnapshotKind, ToNamespace: snapshotNamespace, ToName: snapshotName,
	}
}
