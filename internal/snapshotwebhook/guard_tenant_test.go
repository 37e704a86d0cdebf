package snapshotwebhook

// Scenarios from the adversarial review of issue 22's DELETE guard (e5e378d): scenarios a
// tenant with a ReferenceGrant can set up with nothing but its own claims.

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/xns-csi/csi-provisioner/internal/shared/claimsource"
	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/internal/snapshotwebhook/snapshotvalidation"
)

// asCached is the claim as the guard's cache holds it. (The cache's
// transform keeps the annotation ProvisionerOf reads, under the GA key; the
// guard reads it through ProvisionerOf either way, so the claim is used as
// it is: the transform is being renamed in the working tree.)
func asCached(_ *testing.T, claim *v1.PersistentVolumeClaim) *v1.PersistentVolumeClaim { return claim }

// TestHandAnnotatedClaimThatNoProvisionerServesPinsNothing: the
// docs/webhook.md (and DeleteGuard's comment) promise that "a claim of a missing
// class ... or one waiting for its first consumer holds nothing, so a
// granted namespace cannot pin the snapshot with a claim that will never
// be provisioned". The guard only reads the storage-provisioner
// annotation, which the claim's owner can write by hand. The PV
// controller never removes it, and the provisioner (sig-storage-lib's
// shouldProvision) never provisions such a claim: getStorageClass fails
// for a missing (or "") class, and a WaitForFirstConsumer class without
// volume.kubernetes.io/selected-node is skipped. So the claim is pending
// forever and, per docs/webhook.md, must hold nothing.
func TestHandAnnotatedClaimThatNoProvisionerServesPinsNothing(t *testing.T) {
	snap := snapshot(fromClaim("data"), withFinalizer(datasource.SnapshotFinalizer), ofClass("csi-snapclass"))
	for name, class := range map[string]string{
		"a class that does not exist":                                  "no-such-class",
		"no class at all (storageClassName \"\")":                      "",
		"a WaitForFirstConsumer class, no node selected (no consumer)": "wffc",
	} {
		t.Run(name, func(t *testing.T) {
			claim := restoring("prod", "squatter", datasource.SnapshotKind, "snap")
			claim.Spec.StorageClassName = &class
			// Written by the tenant, not the PV controller: the driver's
			// name is public (kubectl get volumesnapshotclass).
			claim.Annotations = map[string]string{claimsource.AnnStorageProvisioner: restoreDriver}
			guard := withClasses(guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{asCached(t, claim)}))
			v := (&Admitter{DeleteGuard: guard}).Admit(request(t, admissionv1.Delete, snapshotsGVR, nil, snap))
			if status := v.status("snap"); status != nil {
				t.Errorf("a claim no provisioner will ever provision pins the snapshot (until the owner revokes the whole namespace's grant): %s", status.Message)
			}
		})
	}
}

// TestHoldsThatAreRight: what the review checked and found to hold
// (passes today): the beta annotation alone holds through the guard's
// cache transform; a GA annotation left empty hands the claim to nobody,
// as the provisioner library reads it; a same-namespace dataSourceRef with
// the namespace spelled out is protected; an unknown or unreadable class
// fails safe (any provisioner holds).
func TestHoldsThatAreRight(t *testing.T) {
	protected := snapshot(fromClaim("data"), withFinalizer(datasource.SnapshotFinalizer), ofClass("csi-snapclass"))
	crossProtected := snapshot(fromClaim("data"), withFinalizer(datasource.CrossNamespaceSnapshotFinalizer), ofClass("csi-snapclass"))
	beta := restoring("prod", "restore", datasource.SnapshotKind, "snap")
	beta.Annotations = map[string]string{claimsource.AnnBetaStorageProvisioner: restoreDriver}
	emptyGA := restoring("prod", "restore", datasource.SnapshotKind, "snap")
	emptyGA.Annotations = map[string]string{claimsource.AnnStorageProvisioner: "", claimsource.AnnBetaStorageProvisioner: restoreDriver}
	for name, tc := range map[string]struct {
		guard  *DeleteGuard
		snap   any
		denied bool
	}{
		"beta annotation only holds": {
			guard: withClasses(guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{asCached(t, beta)})), snap: protected, denied: true},
		"an empty GA annotation hands the claim to nobody (as the library reads it)": {
			guard: withClasses(guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{asCached(t, emptyGA)})), snap: protected},
		"same namespace, dataSourceRef.namespace spelled out, is protected": {
			guard: withClasses(guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{asCached(t, namingItsNamespace(restoring("ns", "local", datasource.SnapshotKind, "snap")))})),
			snap:  crossProtected, denied: true},
		"class list unreadable: any provisioner holds (fail-safe)": {
			guard: func() *DeleteGuard {
				g := guardOf(t, granted, nil, true, []*v1.PersistentVolumeClaim{asCached(t, inClass("other", handedTo("other.csi.example.com", restoring("prod", "restore", datasource.SnapshotKind, "snap"))))})
				g.SnapshotClasses = func() ([]snapshotvalidation.Class, error) { return nil, errors.New("forbidden") }
				return g
			}(), snap: protected, denied: true},
	} {
		t.Run(name, func(t *testing.T) {
			v := (&Admitter{DeleteGuard: tc.guard}).Admit(request(t, admissionv1.Delete, snapshotsGVR, nil, tc.snap))
			if denied := v.status("snap") != nil; denied != tc.denied {
				t.Errorf("denied %v, want %v", denied, tc.denied)
			}
		})
	}
}

// TestAConflictIsToldOncePerConflictAndReplica: deploy/webhook runs
// 3 replicas, each with its own reporter (no leader election, the told set
// in memory), so each class gets one event per replica, and again from
// every replica at each restart or rollout; docs/webhook.md says so. The
// events are bounded by replicas × classes in conflict.
func TestAConflictIsToldOncePerConflictAndReplica(t *testing.T) {
	classes := []snapshotvalidation.Class{{Name: "a", Driver: "d1", Default: true}, {Name: "b", Driver: "d1", Default: true}}
	recorder := record.NewFakeRecorder(100)
	replica := func() *conflictReporter {
		return &conflictReporter{kind: snapshotvalidation.SnapshotClassKind, list: func() ([]snapshotvalidation.Class, error) { return classes, nil },
			event: recorder, gauge: prometheus.NewGauge(prometheus.GaugeOpts{Name: "conflicts"}),
			ref: func(name string) *v1.ObjectReference { return &v1.ObjectReference{Name: name} }}
	}
	const replicas = 3 // deploy/webhook/deployment.yaml
	for range replicas {
		replica().check()
	}
	if n := len(recorder.Events); n != replicas*len(classes) {
		t.Errorf("%d MultipleDefaultClasses events from %d replicas for one conflict of %d classes, want %d (once per conflict and replica)", n, replicas, len(classes), replicas*len(classes))
	}
}
