package snapshotwebhook

import (
	"encoding/json"
	"errors"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/internal/snapshotwebhook/snapshotvalidation"
)

// Builders of admission requests: request(t, create, snapshotsGVR,
// snapshot("s", fromClaim("c")), nil).

var (
	snapshotsGVR     = metav1.GroupVersionResource{Group: snapshotGroup, Version: "v1", Resource: snapshots}
	contentsGVR      = metav1.GroupVersionResource{Group: snapshotGroup, Version: "v1", Resource: contents}
	classesGVR       = metav1.GroupVersionResource{Group: snapshotGroup, Version: "v1", Resource: snapshotClasses}
	groupClassesGVR  = metav1.GroupVersionResource{Group: groupSnapshotGroup, Version: "v1beta2", Resource: groupSnapshotClasses}
	persistentVolGVR = metav1.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
)

// request is an AdmissionRequest of op on resource with obj and old
// encoded as JSON (nil stays empty; a []byte is used as is).
func request(t *testing.T, op admissionv1.Operation, resource metav1.GroupVersionResource, obj, old any) *admissionv1.AdmissionRequest {
	t.Helper()
	kinds := map[string]string{snapshots: "VolumeSnapshot", contents: "VolumeSnapshotContent", snapshotClasses: "VolumeSnapshotClass",
		groupSnapshotClasses: "VolumeGroupSnapshotClass", "persistentvolumes": "PersistentVolume"}
	req := &admissionv1.AdmissionRequest{
		UID: types.UID("uid-" + string(op)), Operation: op, Resource: resource, Name: "snap", Namespace: "ns",
		Kind:      metav1.GroupVersionKind{Group: resource.Group, Version: resource.Version, Kind: kinds[resource.Resource]},
		Object:    raw(t, obj),
		OldObject: raw(t, old),
	}
	return req
}

func raw(t *testing.T, obj any) runtime.RawExtension {
	t.Helper()
	switch obj := obj.(type) {
	case nil:
		return runtime.RawExtension{}
	case []byte:
		return runtime.RawExtension{Raw: obj}
	default:
		data, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		return runtime.RawExtension{Raw: data}
	}
}

// reviewOf is req in an admission.k8s.io/v1 AdmissionReview, as JSON.
func reviewOf(t *testing.T, req *admissionv1.AdmissionRequest) []byte {
	t.Helper()
	data, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func snapshot(opts ...func(*snapv1.VolumeSnapshot)) *snapv1.VolumeSnapshot {
	s := &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: "ns"}}
	for _, o := range opts {
		o(s)
	}
	return s
}

func fromClaim(name string) func(*snapv1.VolumeSnapshot) {
	return func(s *snapv1.VolumeSnapshot) { s.Spec.Source.PersistentVolumeClaimName = &name }
}

func fromContent(name string) func(*snapv1.VolumeSnapshot) {
	return func(s *snapv1.VolumeSnapshot) { s.Spec.Source.VolumeSnapshotContentName = &name }
}

func withFinalizer(f string) func(*snapv1.VolumeSnapshot) {
	return func(s *snapv1.VolumeSnapshot) { s.Finalizers = append(s.Finalizers, f) }
}

func content(volumeHandle string, uid types.UID) *snapv1.VolumeSnapshotContent {
	c := &snapv1.VolumeSnapshotContent{ObjectMeta: metav1.ObjectMeta{Name: "content"}}
	c.Spec.Source.VolumeHandle = &volumeHandle
	c.Spec.VolumeSnapshotRef.Name, c.Spec.VolumeSnapshotRef.Namespace, c.Spec.VolumeSnapshotRef.UID = "snap", "ns", uid
	return c
}

// class is a VolumeSnapshotClass (or, with the group annotation, a
// VolumeGroupSnapshotClass: the webhook reads the same fields of both).
func class(name, driver, defaultAnnotation string) *snapv1.VolumeSnapshotClass {
	c := &snapv1.VolumeSnapshotClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Driver: driver}
	if defaultAnnotation != "" {
		c.Annotations = map[string]string{defaultAnnotation: "true"}
	}
	return c
}

// classes is a ClassLister of fixed classes.
func classes(cs ...snapshotvalidation.Class) ClassLister {
	return func() ([]snapshotvalidation.Class, error) { return cs, nil }
}

// unavailable is a ClassLister whose cache cannot be read.
func unavailable() ([]snapshotvalidation.Class, error) {
	return nil, errors.New("VolumeSnapshotClass API (snapshot.storage.k8s.io/v1/volumesnapshotclasses): cache not synced yet")
}
