package snapshotwebhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/shared/linkcache/linkcachetest"
	"github.com/xns-csi/csi-provisioner/internal/shared/referencegrant"
	"github.com/xns-csi/csi-provisioner/internal/shared/sourceuse"
	"github.com/xns-csi/csi-provisioner/internal/shared/sourceuse/sourceusetest"
	"github.com/xns-csi/csi-provisioner/internal/snapshotwebhook/snapshotvalidation"
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
// VolumeSnapshotLink), handed to the provisioner restoreDriver. As
// kube-apiserver stores it: spec.dataSource mirrors a dataSourceRef
// without a namespace.
func restoring(namespace, name, kind, source string) *v1.PersistentVolumeClaim {
	group := datasource.SnapshotGroup
	ref := &v1.TypedObjectReference{APIGroup: &group, Kind: kind, Name: source}
	if kind == datasource.SnapshotKind && namespace != "ns" {
		sourceNamespace := "ns"
		ref.Namespace = &sourceNamespace
	}
	claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID(name + "-uid"),
		Annotations: map[string]string{claimsource.AnnStorageProvisioner: restoreDriver}},
		Spec: v1.PersistentVolumeClaimSpec{DataSourceRef: ref, StorageClassName: ptr.To("fast")}}
	if ref.Namespace == nil {
		claim.Spec.DataSource = &v1.TypedLocalObjectReference{APIGroup: &group, Kind: kind, Name: source}
	}
	return claim
}

// restoreDriver is the driver the claims of restoring are handed to.
const restoreDriver = "hostpath.csi.k8s.io"

// handedTo is the claim as the PV controller hands it to provisioner, ""
// for a claim it has not handed to any (its class is missing, or it waits
// for its first consumer).
func handedTo(provisioner string, claim *v1.PersistentVolumeClaim) *v1.PersistentVolumeClaim {
	delete(claim.Annotations, claimsource.AnnStorageProvisioner)
	if provisioner != "" {
		claim.Annotations[claimsource.AnnBetaStorageProvisioner] = provisioner
	}
	return claim
}

// inClass is the claim in StorageClass class.
func inClass(class string, claim *v1.PersistentVolumeClaim) *v1.PersistentVolumeClaim {
	claim.Spec.StorageClassName = &class
	return claim
}

// ofClass is the snapshot taken with class, and classes lists the
// VolumeSnapshotClasses for the guard.
func ofClass(class string) func(*snapv1.VolumeSnapshot) {
	return func(s *snapv1.VolumeSnapshot) { s.Spec.VolumeSnapshotClassName = &class }
}

// withClasses gives g the VolumeSnapshotClass "csi-snapclass" of restoreDriver.
func withClasses(g *DeleteGuard) *DeleteGuard {
	g.SnapshotClasses = func() ([]snapshotvalidation.Class, error) {
		return []snapshotvalidation.Class{{Name: "csi-snapclass", Driver: restoreDriver}}, nil
	}
	return g
}

// namingItsNamespace is the claim with dataSourceRef.namespace set to its
// own namespace (KEP-3294 test case 4): kube-apiserver leaves
// spec.dataSource empty.
func namingItsNamespace(claim *v1.PersistentVolumeClaim) *v1.PersistentVolumeClaim {
	claim.Spec.DataSourceRef.Namespace = &claim.Namespace
	claim.Spec.DataSource = nil
	return claim
}

// guardOf is a DeleteGuard over caches holding claims and volumes.
func guardOf(t *testing.T, grants claimsource.GrantChecker, ls linkcachetest.Links, synced bool, claims []*v1.PersistentVolumeClaim, volumes ...string) *DeleteGuard {
	t.Helper()
	claimIndex, pvs := sourceusetest.Caches(t, claims, volumes...)
	return &DeleteGuard{
		Finder: sourceuse.Finder{Claims: claimIndex, Links: ls, Volumes: pvs, VolumeName: volumeName,
			Policy: claimsource.Policy{CrossNamespace: true, Grants: grants, SnapshotLinks: true, Links: ls}},
		Synced:         []cache.InformerSynced{func() bool { return synced }},
		StorageClasses: storageClasses(t),
		Snapshots:      everySnapshotProtected{},
	}
}

// everySnapshotProtected is the snapshot cache of a world where every
// snapshot a claim names exists, its restores begun: it carries every
// protection finalizer.
type everySnapshotProtected struct{}

func (everySnapshotProtected) SnapshotMeta(namespace, name string) (*snapv1.VolumeSnapshot, bool, error) {
	return &snapv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
		Finalizers: []string{datasource.SnapshotFinalizer, datasource.CrossNamespaceSnapshotFinalizer, datasource.LinkSnapshotFinalizer}}}, true, nil
}

// The StorageClasses of the guard's tests: fast (restoreDriver's, immediate
// binding, the class of the claims of restoring), wffc (restoreDriver's,
// WaitForFirstConsumer) and other (another driver's).
func storageClasses(t *testing.T) storagelisters.StorageClassLister {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	for _, c := range []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: restoreDriver},
		{ObjectMeta: metav1.ObjectMeta{Name: "wffc"}, Provisioner: restoreDriver, VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Provisioner: "other.csi.example.com"},
	} {
		if err := indexer.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	return storagelisters.NewStorageClassLister(indexer)
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
		"a restore in the snapshot's namespace naming dataSourceRef.namespace is denied: the snapshot-controller cannot see it": {
			guard: guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{namingItsNamespace(restoring("ns", "local", datasource.SnapshotKind, "snap"))}),
			snap:  crossProtected, denied: []string{"ns/local"}, reason: reasonCrossNamespaceRestore},
		"a restore through a link in the snapshot's namespace is denied: the snapshot-controller cannot see it": {
			guard: guardOf(t, granted, linkcachetest.Links{linkcachetest.Link("ns", "local-link", "", "snap")}, true,
				[]*v1.PersistentVolumeClaim{restoring("ns", "through", datasource.LinkKind, "local-link")}),
			snap: linkProtected, denied: []string{"ns/through"}, reason: reasonCrossNamespaceRestore},
		"a claim without a grant holds nothing": {
			guard: guardOf(t, notGranted, nil, true, []*v1.PersistentVolumeClaim{prodRestore}), snap: protected},
		"a claim whose PV exists is restored": {
			guard: guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{prodRestore}, "pvc-restore-uid"), snap: protected},
		"a claim restoring another snapshot holds nothing": {
			guard: guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{restoring("prod", "other", datasource.SnapshotKind, "other")}), snap: protected},
		"a claim the PV controller has not handed to a provisioner holds nothing (missing class, waiting for its consumer)": {
			guard: guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{handedTo("", restoring("prod", "restore", datasource.SnapshotKind, "snap"))}),
			snap:  protected},
		"a claim handed to the snapshot's driver (beta annotation) holds it": {
			guard:  withClasses(guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{handedTo(restoreDriver, restoring("prod", "restore", datasource.SnapshotKind, "snap"))})),
			snap:   snapshot(fromClaim("data"), withFinalizer(datasource.SnapshotFinalizer), ofClass("csi-snapclass")),
			denied: []string{"prod/restore"}, reason: reasonCrossNamespaceRestore},
		"a claim handed to another driver holds nothing": {
			guard: withClasses(guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{handedTo("other.csi.example.com", restoring("prod", "restore", datasource.SnapshotKind, "snap"))})),
			snap:  snapshot(fromClaim("data"), withFinalizer(datasource.SnapshotFinalizer), ofClass("csi-snapclass"))},
		"a claim handed to any driver holds a snapshot whose class is unknown": {
			guard:  withClasses(guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{inClass("other", handedTo("other.csi.example.com", restoring("prod", "restore", datasource.SnapshotKind, "snap")))})),
			snap:   snapshot(fromClaim("data"), withFinalizer(datasource.SnapshotFinalizer), ofClass("gone")),
			denied: []string{"prod/restore"}, reason: reasonCrossNamespaceRestore},
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
				if way := "ReferenceGrant in namespace ns that lets its namespace"; !strings.Contains(status.Message, way) {
					t.Errorf("denied with %q, want the way out named (%q)", status.Message, way)
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

func TestGuardedClaimKeepsTheProvisionerItWasHandedTo(t *testing.T) {
	claim := handedTo(restoreDriver, restoring("prod", "restore", datasource.SnapshotKind, "snap"))
	claim.Annotations["note"] = "dropped"
	claim.Labels = map[string]string{"app": "dropped"}
	obj, err := GuardedClaim(claim)
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*v1.PersistentVolumeClaim)
	if want := map[string]string{claimsource.AnnStorageProvisioner: restoreDriver}; !maps.Equal(got.Annotations, want) || got.Labels != nil {
		t.Errorf("annotations %v labels %v, want %v and none", got.Annotations, got.Labels, want)
	}
	if got.Spec.DataSourceRef == nil || got.Spec.DataSourceRef.Name != "snap" {
		t.Errorf("dataSourceRef %v, want the snapshot kept", got.Spec.DataSourceRef)
	}
}
