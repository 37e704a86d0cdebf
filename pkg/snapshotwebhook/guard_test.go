package snapshotwebhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/xns-csi/csi-provisioner/pkg/claimsource"
	"github.com/xns-csi/csi-provisioner/pkg/datasource"
	"github.com/xns-csi/csi-provisioner/pkg/linkcache/linkcachetest"
	"github.com/xns-csi/csi-provisioner/pkg/referencegrant"
	"github.com/xns-csi/csi-provisioner/pkg/sourceuse"
	"github.com/xns-csi/csi-provisioner/pkg/sourceuse/sourceusetest"
)

// grantsAre answers every grant check with one decision.
type grantsAre referencegrant.Decision

func (g grantsAre) Check(referencegrant.Reference) referencegrant.Decision {
	return referencegrant.Decision(g)
}

var (
	granted    = grantsAre{Allowed: true, Reason: referencegrant.ReasonAllowed}
	notGranted = grantsAre{Message: "no ReferenceGrant in ns allows it"}
	grantsDown = grantsAre{Reason: referencegrant.ReasonUnavailable, Message: "ReferenceGrant cache not synced yet"}
)

// restoring is a pending claim in namespace restoring ns/snap, directly
// (kind VolumeSnapshot) or through the link of that name (kind
// VolumeSnapshotLink).
func restoring(namespace, name, kind, source string) *v1.PersistentVolumeClaim {
	group := datasource.SnapshotGroup
	ref := &v1.TypedObjectReference{APIGroup: &group, Kind: kind, Name: source}
	if kind == datasource.SnapshotKind && namespace != "ns" {
		sourceNamespace := "ns"
		ref.Namespace = &sourceNamespace
	}
	return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID(name + "-uid")},
		Spec: v1.PersistentVolumeClaimSpec{DataSourceRef: ref}}
}

// guardOf is a DeleteGuard over caches holding claims and volumes.
func guardOf(t *testing.T, grants claimsource.GrantChecker, ls linkcachetest.Links, synced bool, claims []*v1.PersistentVolumeClaim, volumes ...string) *DeleteGuard {
	t.Helper()
	claimIndex, pvs := sourceusetest.Caches(t, claims, volumes...)
	return &DeleteGuard{
		Finder: sourceuse.Finder{Claims: claimIndex, Links: ls, Volumes: pvs, VolumeName: volumeName,
			Policy: claimsource.Policy{CrossNamespace: true, Grants: grants, SnapshotLinks: true, Links: ls}},
		Synced: []cache.InformerSynced{func() bool { return synced }},
	}
}

// setAs sets g's policy as sidecars with or without the cross-namespace
// gate and --cross-namespace-snapshot decide (newDeleteGuard from the
// flags); without links it has no link cache, as there.
func setAs(g *DeleteGuard, crossNamespace, links bool) *DeleteGuard {
	g.Finder.Policy.CrossNamespace, g.Finder.Policy.SnapshotLinks = crossNamespace, links
	if !links {
		g.Finder.Links, g.Finder.Policy.Links = nil, nil
	}
	return g
}

func TestDeleteGuard(t *testing.T) {
	protected := snapshot(fromClaim("data"), withFinalizer(datasource.SnapshotFinalizer))
	crossProtected := snapshot(fromClaim("data"), withFinalizer(datasource.CrossNamespaceSnapshotFinalizer))
	linkProtected := snapshot(fromClaim("data"), withFinalizer(datasource.LinkSnapshotFinalizer))
	prodRestore := restoring("prod", "restore", datasource.SnapshotKind, "snap")
	link := linkcachetest.Link("prod", "to-snap", "ns", "snap")
	for name, tc := range map[string]struct {
		guard *DeleteGuard
		snap  *snapv1.VolumeSnapshot
		// denied names the claims in the denial; empty when allowed.
		denied []string
		reason string
	}{
		"a snapshot restored in another namespace with a grant is denied, naming the claim": {
			guard: guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{prodRestore}), snap: protected,
			denied: []string{"prod/restore"}, reason: reasonCrossNamespaceRestore},
		"a snapshot protected by the finalizer of restores naming its namespace is denied": {
			guard: guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{prodRestore}), snap: crossProtected,
			denied: []string{"prod/restore"}, reason: reasonCrossNamespaceRestore},
		"every restoring claim is named": {
			guard: guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{prodRestore, restoring("dev", "copy", datasource.SnapshotKind, "snap")}),
			snap:  protected, denied: []string{"dev/copy", "prod/restore"}, reason: reasonCrossNamespaceRestore},
		"a restore through a VolumeSnapshotLink is denied": {
			guard: guardOf(t, granted, linkcachetest.Links{link}, true, []*v1.PersistentVolumeClaim{restoring("prod", "through", datasource.LinkKind, "to-snap")}),
			snap:  linkProtected, denied: []string{"prod/through"}, reason: reasonCrossNamespaceRestore},
		"sidecars without the gate restore nothing from dataSourceRef.namespace": {
			guard: setAs(guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{prodRestore}), false, true), snap: crossProtected},
		"sidecars without --cross-namespace-snapshot restore nothing through links": {
			guard: setAs(guardOf(t, granted, linkcachetest.Links{link}, true, []*v1.PersistentVolumeClaim{restoring("prod", "through", datasource.LinkKind, "to-snap")}), true, false),
			snap:  linkProtected},
		"a snapshot without the protection finalizer is allowed": {
			guard: guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{prodRestore}), snap: snapshot(fromClaim("data"))},
		"a restore in the snapshot's own namespace is left to the snapshot-controller": {
			guard: guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{restoring("ns", "local", datasource.SnapshotKind, "snap")}), snap: protected},
		"a claim without a grant holds nothing": {
			guard: guardOf(t, notGranted, nil, true, []*v1.PersistentVolumeClaim{prodRestore}), snap: protected},
		"a claim whose PV exists is restored": {
			guard: guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{prodRestore}, "pvc-restore-uid"), snap: protected},
		"a claim restoring another snapshot holds nothing": {
			guard: guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{restoring("prod", "other", datasource.SnapshotKind, "other")}), snap: protected},
		"unreadable grants allow, counted": {
			guard: guardOf(t, grantsDown, nil, true, []*v1.PersistentVolumeClaim{prodRestore}), snap: protected, reason: reasonRestoresUnknown},
		"unsynced caches allow, counted": {
			guard: guardOf(t, granted, nil, false, []*v1.PersistentVolumeClaim{prodRestore}), snap: protected, reason: reasonRestoresUnknown},
	} {
		t.Run(name, func(t *testing.T) {
			v := (&Admitter{DeleteGuard: tc.guard}).Admit(request(t, admissionv1.Delete, snapshotsGVR, nil, tc.snap))
			if v.resource != snapshots || v.metricReason() != tc.reason {
				t.Errorf("resource %q reason %q, want %q %q", v.resource, v.metricReason(), snapshots, tc.reason)
			}
			status := v.status("snap")
			switch {
			case len(tc.denied) == 0 && status != nil:
				t.Errorf("denied: %s", status.Message)
			case len(tc.denied) > 0 && status == nil:
				t.Errorf("allowed, want denied naming %v", tc.denied)
			case len(tc.denied) > 0:
				want := "PersistentVolumeClaim " + strings.Join(tc.denied, ", ") + ": "
				if len(tc.denied) > 1 {
					want = "PersistentVolumeClaims " + strings.Join(tc.denied, ", ") + ": "
				}
				if status.Code != http.StatusForbidden || !strings.Contains(status.Message, want) || !strings.Contains(status.Message, "external-snapshotter#905") {
					t.Errorf("denied with %d %q, want 403 naming %q", status.Code, status.Message, want)
				}
			}
		})
	}
}

func TestDeleteGuardOff(t *testing.T) {
	snap := snapshot(fromClaim("data"), withFinalizer(datasource.SnapshotFinalizer))
	if v := (&Admitter{}).Admit(request(t, admissionv1.Delete, snapshotsGVR, nil, snap)); !v.allowed() || v.reason != "" {
		t.Errorf("without --guard-cross-namespace-restores a delete is %+v, want allowed", v)
	}
	guard := guardOf(t, granted, nil, true, nil)
	if v := (&Admitter{DeleteGuard: guard}).Admit(request(t, admissionv1.Delete, snapshotsGVR, nil, nil)); !v.allowed() || v.reason != reasonUndecodable {
		t.Errorf("a delete without its old object is %+v, want allowed as undecodable", v)
	}
}

// TestDeleteGuardReview answers a DELETE AdmissionReview, whose old object
// is the snapshot, through the handler.
func TestDeleteGuardReview(t *testing.T) {
	snap := snapshot(fromClaim("data"), withFinalizer(datasource.SnapshotFinalizer))
	guard := guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{restoring("prod", "restore", datasource.SnapshotKind, "snap")})
	h := &Handler{Admitter: &Admitter{DeleteGuard: guard}}
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, snapshotPath, bytes.NewReader(reviewOf(t, request(t, admissionv1.Delete, snapshotsGVR, nil, snap))))
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, r)
	review := &admissionv1.AdmissionReview{}
	if err := json.Unmarshal(rec.Body.Bytes(), review); err != nil {
		t.Fatal(errors.Join(err, errors.New(rec.Body.String())))
	}
	resp := review.Response
	if resp == nil || resp.Allowed || resp.Result == nil || !strings.Contains(resp.Result.Message, "prod/restore") || resp.Result.Code != http.StatusForbidden {
		t.Fatalf("response %+v, want a 403 denial naming prod/restore", resp)
	}
}
