package snapshotvalidation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Builders of the objects the tables validate: newSnapshot(fromClaim("c"),
// withClass("gold")) is a snapshot of claim c with class gold.

type snapshotOption func(*snapv1.VolumeSnapshot)

func newSnapshot(opts ...snapshotOption) *snapv1.VolumeSnapshot {
	s := &snapv1.VolumeSnapshot{}
	s.Name, s.Namespace = "snap", "ns"
	return apply(s, opts)
}

// apply applies the options to obj, in order.
func apply[T any, O ~func(T)](obj T, opts []O) T {
	for _, o := range opts {
		o(obj)
	}
	return obj
}

func fromClaim(name string) snapshotOption {
	return func(s *snapv1.VolumeSnapshot) { s.Spec.Source.PersistentVolumeClaimName = &name }
}

func fromContent(name string) snapshotOption {
	return func(s *snapv1.VolumeSnapshot) { s.Spec.Source.VolumeSnapshotContentName = &name }
}

func withClass(name string) snapshotOption {
	return func(s *snapv1.VolumeSnapshot) { s.Spec.VolumeSnapshotClassName = &name }
}

func snapshotFinalizers(f ...string) snapshotOption {
	return func(s *snapv1.VolumeSnapshot) { s.Finalizers = f }
}

func snapshotLabels(l map[string]string) snapshotOption {
	return func(s *snapv1.VolumeSnapshot) { s.Labels = l }
}

func snapshotReady() snapshotOption {
	return func(s *snapv1.VolumeSnapshot) {
		ready := true
		s.Status = &snapv1.VolumeSnapshotStatus{ReadyToUse: &ready}
	}
}

type contentOption func(*snapv1.VolumeSnapshotContent)

func newContent(opts ...contentOption) *snapv1.VolumeSnapshotContent {
	c := &snapv1.VolumeSnapshotContent{}
	c.Name = "content"
	c.Spec.Driver = "hostpath.csi.k8s.io"
	return apply(c, opts)
}

func fromVolume(handle string) contentOption {
	return func(c *snapv1.VolumeSnapshotContent) { c.Spec.Source.VolumeHandle = &handle }
}

func fromSnapshotHandle(handle string) contentOption {
	return func(c *snapv1.VolumeSnapshotContent) { c.Spec.Source.SnapshotHandle = &handle }
}

func refTo(namespace, name string) contentOption {
	return func(c *snapv1.VolumeSnapshotContent) {
		c.Spec.VolumeSnapshotRef.Namespace, c.Spec.VolumeSnapshotRef.Name = namespace, name
	}
}

func boundTo(uid types.UID) contentOption {
	return func(c *snapv1.VolumeSnapshotContent) { c.Spec.VolumeSnapshotRef.UID = uid }
}

func volumeMode(mode v1.PersistentVolumeMode) contentOption {
	return func(c *snapv1.VolumeSnapshotContent) { c.Spec.SourceVolumeMode = &mode }
}

func contentFinalizers(f ...string) contentOption {
	return func(c *snapv1.VolumeSnapshotContent) { c.Finalizers = f }
}

func contentReady() contentOption {
	return func(c *snapv1.VolumeSnapshotContent) {
		ready := true
		c.Status = &snapv1.VolumeSnapshotContentStatus{ReadyToUse: &ready}
	}
}

// checkErrors compares errs with a table row's expectation: want, the
// errors as "field: type" lines, and message, when set, the whole message
// users see through kubectl.
func checkErrors(t *testing.T, errs field.ErrorList, want []string, message string) {
	t.Helper()
	var got []string
	for _, e := range errs {
		got = append(got, e.Field+": "+e.Type.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if message != "" && errs.ToAggregate().Error() != message {
		t.Errorf("message\n got %s\nwant %s", errs.ToAggregate(), message)
	}
}

// The errors the tables expect, as checkErrors spells them.
const (
	sourceRequired       = "spec.source: Required value"
	sourceForbidden      = "spec.source: Forbidden"
	classInvalid         = "spec.volumeSnapshotClassName: Invalid value"
	claimImmutable       = "spec.source.persistentVolumeClaimName: Invalid value"
	contentNameImmutable = "spec.source.volumeSnapshotContentName: Invalid value"

	handleRequired          = "spec.source: Required value"
	handleForbidden         = "spec.source: Forbidden"
	refNameRequired         = "spec.volumeSnapshotRef.name: Required value"
	refNamespaceRequired    = "spec.volumeSnapshotRef.namespace: Required value"
	refImmutable            = "spec.volumeSnapshotRef: Invalid value"
	volumeHandleImmutable   = "spec.source.volumeHandle: Invalid value"
	snapshotHandleImmutable = "spec.source.snapshotHandle: Invalid value"
	volumeModeImmutable     = "spec.sourceVolumeMode: Invalid value"
)
