// Package datasource resolves a PersistentVolumeClaim into the one data
// source the provisioner acts on.
//
// A claim can name its source in three ways: the legacy spec.dataSource
// (seed 003), spec.dataSourceRef (KEP-1495, seed 001) and the namespace of
// spec.dataSourceRef, which is how Kubernetes shipped KEP-3294's
// DataSourceRef2 (seed 000). Resolve folds them into a Source following the
// compatibility rules of those KEPs; it is pure and reads nothing else.
package datasource

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	// SnapshotGroup is the API group of VolumeSnapshots.
	SnapshotGroup = "snapshot.storage.k8s.io"
	// SnapshotKind is the kind of a VolumeSnapshot.
	SnapshotKind = "VolumeSnapshot"
	// ClaimKind is the kind of a PersistentVolumeClaim (core group).
	ClaimKind = "PersistentVolumeClaim"
	// LinkKind is the kind of a VolumeSnapshotLink (group SnapshotGroup):
	// KEP-3294's alternative, a namespaced object naming a VolumeSnapshot
	// in another namespace.
	LinkKind = "VolumeSnapshotLink"
)

// Type says which component is responsible for a source.
type Type string

const (
	// None means the claim has no data source: an empty volume.
	None Type = "None"
	// Snapshot means a VolumeSnapshot: restored by the CSI driver.
	Snapshot Type = "VolumeSnapshot"
	// Claim means another PVC: cloned by the CSI driver.
	Claim Type = "PersistentVolumeClaim"
	// Link means a VolumeSnapshotLink: its VolumeSnapshot is restored by
	// the CSI driver when this provisioner serves links, else a populator's
	// kind.
	Link Type = "VolumeSnapshotLink"
	// Populator means any other kind: a volume populator fills the volume,
	// the provisioner leaves the claim alone (KEP-1495).
	Populator Type = "Populator"
)

// Source is the effective data source of a claim, KEP-3294's DataSourceRef2.
type Source struct {
	// APIGroup is the group of the source; "" is the core group.
	APIGroup string
	// Kind is the kind of the source.
	Kind string
	// Namespace is where the source lives; always set, the claim's own
	// namespace when the claim did not name one.
	Namespace string
	// Name is the name of the source.
	Name string
	// ExplicitNamespace is true when the claim named the namespace in
	// spec.dataSourceRef.namespace. Such a reference needs a ReferenceGrant
	// even when it names the claim's own namespace (KEP-3294, test plan),
	// and its use is protected by a finalizer of its own
	// (CrossNamespaceSnapshotFinalizer, CrossNamespaceCloneFinalizer).
	ExplicitNamespace bool
	// ThroughLink is true for a VolumeSnapshot used through a
	// VolumeSnapshotLink. Such uses are protected by a finalizer of their
	// own (LinkSnapshotFinalizer), so that provisioners that do not follow
	// links, which cannot count them, never release it.
	ThroughLink bool
}

// Type classifies the source.
func (s Source) Type() Type {
	switch {
	case s.Kind == "" && s.Name == "":
		return None
	case s.APIGroup == SnapshotGroup && s.Kind == SnapshotKind:
		return Snapshot
	case s.APIGroup == "" && s.Kind == ClaimKind:
		return Claim
	case s.APIGroup == SnapshotGroup && s.Kind == LinkKind:
		return Link
	default:
		return Populator
	}
}

// NeedsGrant reports whether using the source requires a ReferenceGrant in
// the source's namespace.
func (s Source) NeedsGrant() bool {
	return s.ExplicitNamespace
}

// Object names the source object itself, however the claim spelled its
// namespace, as used directly or through links: the key of what counts
// uses of the object whatever their spelling (attempts in flight). A
// Source with its spelling is one use of the object, the key of what a
// finalizer guards (see Finalizer).
func (s Source) Object() Source {
	s.ExplicitNamespace = false
	return s
}

// Target names the object alone, however it is used: the key of
// everything that writes to the object.
func (s Source) Target() Source {
	s.ExplicitNamespace, s.ThroughLink = false, false
	return s
}

// String names the source for events and logs, e.g.
// `VolumeSnapshot prod/foo-backup`.
func (s Source) String() string {
	if s.Type() == None {
		return "no data source"
	}
	kind := s.Kind
	if s.APIGroup != "" && s.Type() == Populator {
		kind = s.Kind + "." + s.APIGroup
	}
	return fmt.Sprintf("%s %s/%s", kind, s.Namespace, s.Name)
}

// InvalidError explains why a claim's data source fields cannot be used.
// Its message is written for the claim's owner.
type InvalidError struct {
	Message string
}

func (e *InvalidError) Error() string { return e.Message }

// Resolve returns the claim's effective data source.
//
// The rules, from KEP-1495 and KEP-3294:
//   - neither field set: no source;
//   - only dataSource: that source, in the claim's namespace;
//   - dataSourceRef (with or without dataSource): dataSourceRef wins, in its
//     namespace if it names one, else in the claim's; if dataSource is set as
//     well it must name the same object, or the claim is rejected;
//   - an apiGroup with a version in it ("snapshot.storage.k8s.io/v1", as the
//     KEP's example spells it) is rejected: API groups carry no version;
//   - a reference that names neither a kind nor an object is rejected.
func Resolve(claim *v1.PersistentVolumeClaim) (Source, error) {
	ds, ref := claim.Spec.DataSource, claim.Spec.DataSourceRef
	if ds != nil {
		if err := checkGroup("dataSource", ds.APIGroup); err != nil {
			return Source{}, err
		}
		if err := checkNamed("dataSource", ds.Kind, ds.Name); err != nil {
			return Source{}, err
		}
	}
	if ref == nil {
		if ds == nil {
			return Source{Namespace: claim.Namespace}, nil
		}
		return Source{APIGroup: deref(ds.APIGroup), Kind: ds.Kind, Namespace: claim.Namespace, Name: ds.Name}, nil
	}
	if err := checkGroup("dataSourceRef", ref.APIGroup); err != nil {
		return Source{}, err
	}
	if err := checkNamed("dataSourceRef", ref.Kind, ref.Name); err != nil {
		return Source{}, err
	}
	src := Source{APIGroup: deref(ref.APIGroup), Kind: ref.Kind, Namespace: claim.Namespace, Name: ref.Name}
	if ns := deref(ref.Namespace); ns != "" {
		src.Namespace, src.ExplicitNamespace = ns, true
	}
	if ds == nil {
		return src, nil
	}
	local := Source{APIGroup: deref(ds.APIGroup), Kind: ds.Kind, Namespace: claim.Namespace, Name: ds.Name}
	if local.APIGroup != src.APIGroup || local.Kind != src.Kind || local.Name != src.Name || local.Namespace != src.Namespace {
		return Source{}, &InvalidError{Message: fmt.Sprintf(
			"spec.dataSource (%s) and spec.dataSourceRef (%s) name different objects; set only spec.dataSourceRef", local, src)}
	}
	return src, nil
}

// checkGroup refuses a group spelled against ValidateGroup's rule.
func checkGroup(fieldName string, group *string) error {
	if errs := ValidateGroup(field.NewPath("spec", fieldName, "apiGroup"), deref(group)); len(errs) > 0 {
		return &InvalidError{Message: errs.ToAggregate().Error()}
	}
	return nil
}

// checkNamed refuses a reference that is set but names nothing: it asks for
// data, so it must not read as "no data source" and get an empty volume
// (the API server refuses it; FuzzDecideSnapshot found it provisioned).
func checkNamed(fieldName, kind, name string) error {
	if kind == "" && name == "" {
		return &InvalidError{Message: fmt.Sprintf("spec.%s is set but names no kind and no object; name the data source or remove the field", fieldName)}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
