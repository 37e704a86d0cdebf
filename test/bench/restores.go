package main

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	snapv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/snapshot/v1alpha1"
)

// restore is how the claims of a run name their data source.
type restore string

const (
	// plain claims have none: an empty volume.
	plain restore = "plain"
	// namespaced claims name the setup's snapshot in
	// spec.dataSourceRef.namespace (KEP-3294; the alpha gate).
	namespaced restore = "cross-namespace"
	// viaLink claims name a VolumeSnapshotLink in their own namespace that
	// names the setup's snapshot (--cross-namespace-snapshot).
	viaLink restore = "link"
)

// restores are the kinds of claim the bench knows, in the order its tables
// list them: a link's row next to the namespaced one.
var restores = []restore{namespaced, viaLink, plain}

// linkName is the VolumeSnapshotLink the claims of a viaLink run name, in
// their own namespace.
const linkName = "snap-link"

// short is the kind's letter in the names of a run's namespaces.
func (r restore) short() string { return string(r[0]) }

// crossesNamespaces is true for the kinds that need a ReferenceGrant in
// the snapshot's namespace.
func (r restore) crossesNamespaces() bool { return r != plain }

// parseRestores reads a comma-separated list of kinds.
func parseRestores(list []string) ([]restore, error) {
	var out []restore
	for _, name := range list {
		i := slices.Index(restores, restore(name))
		if i < 0 {
			return nil, fmt.Errorf("unknown kind of claim %q (known: %v)", name, restores)
		}
		out = append(out, restores[i])
	}
	return out, nil
}

// source is the dataSourceRef of a claim of kind r in its namespace that
// restores the snapshot "snap" of srcNS; nil for plain.
func (r restore) source(srcNS string) *v1.TypedObjectReference {
	group := datasource.SnapshotGroup
	switch r {
	case namespaced:
		return &v1.TypedObjectReference{APIGroup: &group, Kind: datasource.SnapshotKind, Name: "snap", Namespace: &srcNS}
	case viaLink:
		return &v1.TypedObjectReference{APIGroup: &group, Kind: datasource.LinkKind, Name: linkName}
	}
	return nil
}

// reference is what the sidecar checks against the grants of srcNS for a
// claim of kind r in ns, with no snapshot name: a grant for it allows every
// snapshot of srcNS.
func (r restore) reference(ns, srcNS string) referencegrant.Reference {
	if r == viaLink {
		return referencegrant.LinkReference(ns, srcNS, "")
	}
	return referencegrant.ClaimReference(ns, datasource.SnapshotGroup, datasource.SnapshotKind, srcNS, "")
}

// allow creates what claims of kind r in ns need to restore the setup's
// snapshot: the grant and, for a link, the link.
func (b *bench) allow(s *setup, r restore, ns string) error {
	if err := b.grant(s, r, ns); err != nil {
		return err
	}
	return b.link(s, r, ns)
}

// grant lets the claims of kind r in ns use every snapshot of the setup's
// source namespace; nothing for plain claims.
func (b *bench) grant(s *setup, r restore, ns string) error {
	if !r.crossesNamespaces() {
		return nil
	}
	_, err := b.env.Gateway.GatewayV1().ReferenceGrants(s.srcNS).Create(b.ctx, r.grant(ns, s.srcNS), metav1.CreateOptions{})
	return err
}

// grant is the ReferenceGrant in srcNS that lets claims of kind r in ns
// use every snapshot of srcNS.
func (r restore) grant(ns, srcNS string) *gatewayv1.ReferenceGrant {
	ref := r.reference(ns, srcNS)
	return &gatewayv1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Name: "allow-" + r.short() + "-" + ns, Namespace: srcNS},
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.Group(ref.FromGroup), Kind: gatewayv1.Kind(ref.FromKind),
				Namespace: gatewayv1.Namespace(ref.FromNamespace)}},
			To: []gatewayv1.ReferenceGrantTo{{Group: gatewayv1.Group(ref.ToGroup), Kind: gatewayv1.Kind(ref.ToKind)}},
		}}
}

// link creates, for a viaLink run, the VolumeSnapshotLink in ns that names
// the setup's snapshot.
func (b *bench) link(s *setup, r restore, ns string) error {
	if r != viaLink {
		return nil
	}
	_, err := b.links.SnapshotV1alpha1().VolumeSnapshotLinks(ns).Create(b.ctx, &snapv1alpha1.VolumeSnapshotLink{
		ObjectMeta: metav1.ObjectMeta{Name: linkName, Namespace: ns},
		Spec:       snapv1alpha1.VolumeSnapshotLinkSpec{Source: snapv1alpha1.VolumeSnapshotLinkSource{Namespace: s.srcNS, Name: "snap"}},
	}, metav1.CreateOptions{})
	return err
}
