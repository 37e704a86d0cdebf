package snapshotwebhook

import (
	"net/http"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/xns-csi/csi-provisioner/internal/snapshotwebhook/snapshotvalidation"
)

func TestAdmit(t *testing.T) {
	const snapDefault, groupDefault = snapshotvalidation.DefaultSnapshotClassAnnotation, snapshotvalidation.DefaultGroupSnapshotClassAnnotation
	silver := snapshotvalidation.Class{Name: "silver", Driver: "a.csi.io", Default: true}
	admitter := &Admitter{
		Content:              snapshotvalidation.ContentOptions{PreventVolumeModeConversion: true},
		SnapshotClasses:      classes(silver),
		GroupSnapshotClasses: classes(snapshotvalidation.Class{Name: "group-silver", Driver: "a.csi.io", Default: true}),
	}
	valid := snapshot(fromClaim("data"))
	invalid := snapshot(fromClaim("data"), fromContent("content"))
	for name, tc := range map[string]struct {
		admitter *Admitter
		req      *admissionv1.AdmissionRequest
		// message is the denial's message; empty when allowed.
		message  string
		resource string
		reason   string
	}{
		"a valid snapshot is allowed": {req: request(t, admissionv1.Create, snapshotsGVR, valid, nil), resource: snapshots},
		"an invalid snapshot is denied with the rule's message": {req: request(t, admissionv1.Create, snapshotsGVR, invalid, nil),
			resource: snapshots, reason: "spec.source",
			message: `VolumeSnapshot.snapshot.storage.k8s.io "snap" is invalid: spec.source: Forbidden: exactly one of persistentVolumeClaimName and volumeSnapshotContentName must be set, not both`},
		"a source change is denied": {req: request(t, admissionv1.Update, snapshotsGVR, snapshot(fromClaim("other")), valid),
			resource: snapshots, reason: "spec.source.persistentVolumeClaimName",
			message: `VolumeSnapshot.snapshot.storage.k8s.io "snap" is invalid: spec.source.persistentVolumeClaimName: Invalid value: "other": field is immutable (was "data")`},
		"ratcheting: a finalizer removed from an invalid snapshot is allowed": {
			req:      request(t, admissionv1.Update, snapshotsGVR, invalid, snapshot(fromClaim("data"), fromContent("content"), withFinalizer("f"))),
			resource: snapshots},
		"ratcheting: deleting an invalid snapshot is allowed": {req: request(t, admissionv1.Delete, snapshotsGVR, nil, invalid), resource: snapshots},
		"a bound content's reference change is denied": {req: request(t, admissionv1.Update, contentsGVR, content("vol", "uid-2"), content("vol", "uid-1")),
			resource: contents, reason: "spec.volumeSnapshotRef",
			message: `VolumeSnapshotContent.snapshot.storage.k8s.io "snap" is invalid: spec.volumeSnapshotRef: Invalid value: {"namespace":"ns","name":"snap","uid":"uid-2"}: field is immutable once bound (uid uid-1 of ns/snap)`},
		"a valid content is allowed": {req: request(t, admissionv1.Create, contentsGVR, content("vol", ""), nil), resource: contents},
		"a second default class for a driver is denied": {req: request(t, admissionv1.Create, classesGVR, class("gold", "a.csi.io", snapDefault), nil),
			resource: snapshotClasses, reason: "metadata.annotations[snapshot.storage.kubernetes.io/is-default-class]",
			message: `VolumeSnapshotClass.snapshot.storage.k8s.io "snap" is invalid: metadata.annotations[snapshot.storage.kubernetes.io/is-default-class]: Forbidden: driver a.csi.io already has a default VolumeSnapshotClass: silver; at most one default class per driver`},
		"a default class for another driver is allowed": {req: request(t, admissionv1.Create, classesGVR, class("gold", "b.csi.io", snapDefault), nil),
			resource: snapshotClasses},
		"a class that is no default is allowed": {req: request(t, admissionv1.Create, classesGVR, class("gold", "a.csi.io", ""), nil),
			resource: snapshotClasses},
		"a default class is allowed when the classes cannot be read": {admitter: &Admitter{SnapshotClasses: unavailable},
			req: request(t, admissionv1.Create, classesGVR, class("gold", "a.csi.io", snapDefault), nil), resource: snapshotClasses, reason: reasonClassesUnavailable},
		"a second default group class is denied": {req: request(t, admissionv1.Create, groupClassesGVR, class("group-gold", "a.csi.io", groupDefault), nil),
			resource: groupSnapshotClasses, reason: "metadata.annotations[groupsnapshot.storage.kubernetes.io/is-default-class]",
			message: `VolumeGroupSnapshotClass.groupsnapshot.storage.k8s.io "snap" is invalid: metadata.annotations[groupsnapshot.storage.kubernetes.io/is-default-class]: Forbidden: driver a.csi.io already has a default VolumeGroupSnapshotClass: group-silver; at most one default class per driver`},
		"group classes are not validated without --enable-volume-group-snapshot-webhook": {admitter: &Admitter{SnapshotClasses: classes(silver)},
			req: request(t, admissionv1.Create, groupClassesGVR, class("group-gold", "a.csi.io", groupDefault), nil), resource: groupSnapshotClasses, reason: reasonNotValidated},
		"an object that cannot be decoded is allowed": {req: request(t, admissionv1.Create, snapshotsGVR, []byte(`{"spec":{"source":"x"}}`), nil),
			resource: snapshots, reason: reasonUndecodable},
		"an update without its old object is allowed": {req: request(t, admissionv1.Update, contentsGVR, content("vol", ""), nil),
			resource: contents, reason: reasonUndecodable},
		"another resource is allowed": {req: request(t, admissionv1.Create, persistentVolGVR, []byte(`{}`), nil), resource: otherResource, reason: reasonNotValidated},
	} {
		t.Run(name, func(t *testing.T) {
			a := admitter
			if tc.admitter != nil {
				a = tc.admitter
			}
			v := a.Admit(tc.req)
			if v.resource != tc.resource || v.metricReason() != tc.reason {
				t.Errorf("resource %q reason %q, want %q %q", v.resource, v.metricReason(), tc.resource, tc.reason)
			}
			status := v.status(tc.req.Name)
			switch {
			case tc.message == "" && status != nil:
				t.Errorf("denied: %s", status.Message)
			case tc.message != "" && status == nil:
				t.Errorf("allowed, want denied: %s", tc.message)
			case tc.message != "" && (status.Message != tc.message || status.Code != http.StatusBadRequest):
				t.Errorf("denied with %d %q\nwant 400 %q", status.Code, status.Message, tc.message)
			}
		})
	}
}
