package snapshotvalidation

import (
	"sort"
	"strings"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The annotations that make a class its driver's default, as the
// snapshot-controller reads them.
const (
	DefaultSnapshotClassAnnotation      = "snapshot.storage.kubernetes.io/is-default-class"
	DefaultGroupSnapshotClassAnnotation = "groupsnapshot.storage.kubernetes.io/is-default-class"
)

// ClassKind says which kind of class the default-class rule checks: its
// name in messages and its default annotation.
type ClassKind struct {
	// Name is the kind as messages spell it, e.g. "VolumeSnapshotClass".
	Name string
	// Annotation is the annotation whose value "true" makes a class the
	// default of its driver.
	Annotation string
}

// The kinds of classes with a default per driver.
var (
	SnapshotClassKind      = ClassKind{Name: "VolumeSnapshotClass", Annotation: DefaultSnapshotClassAnnotation}
	GroupSnapshotClassKind = ClassKind{Name: "VolumeGroupSnapshotClass", Annotation: DefaultGroupSnapshotClassAnnotation}
)

// Class is what the default-class rule needs of a class of any kind and
// version.
type Class struct {
	Name   string
	Driver string
	// Default is the kind's annotation set to "true".
	Default bool
}

// NewClass returns the Class of a class of kind with these fields.
func NewClass(kind ClassKind, name, driver string, annotations map[string]string) Class {
	return Class{Name: name, Driver: driver, Default: annotations[kind.Annotation] == "true"}
}

// SnapshotClass returns the Class of a VolumeSnapshotClass.
func SnapshotClass(class *snapv1.VolumeSnapshotClass) Class {
	return NewClass(SnapshotClassKind, class.Name, class.Driver, class.Annotations)
}

// DefaultClass validates a class admission request: at most one class of
// kind per driver may be its default, else the snapshot-controller cannot
// choose one for snapshots without a class and fails them. obj is the class
// of a CREATE or UPDATE, old the stored class of an UPDATE (nil otherwise),
// others the classes of the kind that exist (from an informer cache; obj
// itself among them is ignored).
//
// CRD CEL rules cannot state this rule: it needs the other classes. It
// ratchets as the others: a class that already was its driver's default
// stays valid through updates that keep it so (two defaults created before
// the webhook existed can still lose finalizers, labels and be deleted).
func DefaultClass(kind ClassKind, op Operation, obj Class, old *Class, others []Class) field.ErrorList {
	if (op != Create && op != Update) || !obj.Default {
		return nil
	}
	if op == Update && old != nil && old.Default && old.Driver == obj.Driver {
		return nil
	}
	var defaults []string
	for _, other := range others {
		if other.Default && other.Driver == obj.Driver && other.Name != obj.Name {
			defaults = append(defaults, other.Name)
		}
	}
	if len(defaults) == 0 {
		return nil
	}
	sort.Strings(defaults)
	path := field.NewPath("metadata", "annotations").Key(kind.Annotation)
	return field.ErrorList{field.Forbidden(path, "driver "+obj.Driver+" already has a default "+kind.Name+": "+
		strings.Join(defaults, ", ")+"; at most one default class per driver")}
}
