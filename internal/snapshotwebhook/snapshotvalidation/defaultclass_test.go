package snapshotvalidation

import (
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func class(name, driver string, isDefault bool) Class {
	return Class{Name: name, Driver: driver, Default: isDefault}
}

func TestDefaultClass(t *testing.T) {
	gold := class("gold", "a.csi.io", true)
	for name, tc := range map[string]struct {
		op     Operation
		obj    Class
		old    *Class
		others []Class
		want   string
	}{
		"a first default for the driver is allowed": {op: Create, obj: gold},
		"a default when another driver has one is allowed": {op: Create, obj: gold,
			others: []Class{class("other", "b.csi.io", true)}},
		"a second default for the driver is denied, naming the first": {op: Create, obj: gold,
			others: []Class{class("silver", "a.csi.io", true)},
			want:   "metadata.annotations[snapshot.storage.kubernetes.io/is-default-class]: Forbidden: driver a.csi.io already has a default VolumeSnapshotClass: silver; at most one default class per driver"},
		"every other default is named": {op: Create, obj: gold,
			others: []Class{class("z", "a.csi.io", true), class("silver", "a.csi.io", true), class("plain", "a.csi.io", false)},
			want:   "metadata.annotations[snapshot.storage.kubernetes.io/is-default-class]: Forbidden: driver a.csi.io already has a default VolumeSnapshotClass: silver, z; at most one default class per driver"},
		"a class that is not a default is allowed": {op: Create, obj: class("plain", "a.csi.io", false),
			others: []Class{class("silver", "a.csi.io", true)}},
		"making a class the default when another is denied": {op: Update, obj: gold, old: &Class{Name: "gold", Driver: "a.csi.io"},
			others: []Class{class("silver", "a.csi.io", true), class("gold", "a.csi.io", false)},
			want:   "metadata.annotations[snapshot.storage.kubernetes.io/is-default-class]: Forbidden: driver a.csi.io already has a default VolumeSnapshotClass: silver; at most one default class per driver"},
		"the class itself in the cache is not another default": {op: Update, obj: gold, old: &Class{Name: "gold", Driver: "a.csi.io"},
			others: []Class{gold}},
		"ratcheting: an update of one of two defaults is allowed": {op: Update, obj: gold, old: &gold,
			others: []Class{gold, class("silver", "a.csi.io", true)}},
		"moving a default to a driver with a default is denied": {op: Update, obj: gold, old: &Class{Name: "gold", Driver: "b.csi.io", Default: true},
			others: []Class{class("silver", "a.csi.io", true)},
			want:   "metadata.annotations[snapshot.storage.kubernetes.io/is-default-class]: Forbidden: driver a.csi.io already has a default VolumeSnapshotClass: silver; at most one default class per driver"},
		"delete of one of two defaults is allowed": {op: Delete, obj: gold, others: []Class{class("silver", "a.csi.io", true)}},
	} {
		t.Run(name, func(t *testing.T) {
			got := ""
			if errs := DefaultClass(SnapshotClassKind, tc.op, tc.obj, tc.old, tc.others); len(errs) > 0 {
				got = errs.ToAggregate().Error()
			}
			if got != tc.want {
				t.Errorf("message\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestGroupSnapshotClassDefault(t *testing.T) {
	annotated := map[string]string{DefaultGroupSnapshotClassAnnotation: "true"}
	obj := NewClass(GroupSnapshotClassKind, "group-gold", "a.csi.io", annotated)
	other := NewClass(GroupSnapshotClassKind, "group-silver", "a.csi.io", annotated)
	want := "metadata.annotations[groupsnapshot.storage.kubernetes.io/is-default-class]: Forbidden: driver a.csi.io already has a default VolumeGroupSnapshotClass: group-silver; at most one default class per driver"
	if got := DefaultClass(GroupSnapshotClassKind, Create, obj, nil, []Class{other}).ToAggregate(); got == nil || got.Error() != want {
		t.Errorf("got %v, want %s", got, want)
	}
	// The snapshot class annotation does not make a group class a default.
	snapshotAnnotated := NewClass(GroupSnapshotClassKind, "g", "a.csi.io", map[string]string{DefaultSnapshotClassAnnotation: "true"})
	if snapshotAnnotated.Default {
		t.Errorf("a group class with the snapshot class annotation is not a default")
	}
}

func TestSnapshotClass(t *testing.T) {
	for value, want := range map[string]bool{"true": true, "false": false, "True": false, "": false} {
		c := &snapv1.VolumeSnapshotClass{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: map[string]string{DefaultSnapshotClassAnnotation: value}}, Driver: "d"}
		if got := SnapshotClass(c); got != (Class{Name: "c", Driver: "d", Default: want}) {
			t.Errorf("annotation %q: got %+v", value, got)
		}
	}
}
