package provisioner

// Adversarial review of 373dbdd (internal/sidecar/provisioner/saving.go): a PV that
// Provision returned is held per claim UID until the PV cache shows it, and
// a claim handed to Provision again meanwhile gets that PV.

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// libraryAfterProvision does to a PV what the controller library v13 does
// to the PV Provision returned, in the worker that called Provision, right
// after it returns (provisionClaimOperation): it sets the claimRef, appends
// its finalizer when missing, sets the provisioned-by annotation (a write to
// the annotations map) and the class, then hands the same object to its
// volume store, whose queue (CreateProvisionedPVLimiter, as build.go sets)
// keeps it and encodes it again in its own worker on every retry.
func libraryAfterProvision(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) {
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: claim.Namespace, Name: claim.Name,
		UID: claim.UID, ResourceVersion: claim.ResourceVersion}
	const finalizerPV = "external-provisioner.volume.kubernetes.io/finalizer"
	found := false
	for _, f := range pv.Finalizers {
		found = found || f == finalizerPV
	}
	if !found {
		pv.Finalizers = append(pv.Finalizers, finalizerPV)
	}
	metav1.SetMetaDataAnnotation(&pv.ObjectMeta, "pv.kubernetes.io/provisioned-by", driver)
	pv.Spec.StorageClassName = *claim.Spec.StorageClassName
}

// TestAPVBeingSavedIsNotTheObjectTheLibraryHolds: the library keeps
// the PV Provision returned in its unsaved-PV queue while the API server
// refuses it (an overloaded API server's 429, a timeout, a webhook), and
// retries encoding it in the queue's worker. Any event on the claim (its
// owner may patch a label at will) hands the claim to Provision again,
// which now returns the very object the queue holds; the library's worker
// then writes its claimRef, finalizers and annotations map while the
// queue's worker may be encoding it: a data race on a map, which the Go
// runtime may end with "concurrent map read and map write" (the process
// dies, its parked attempts with it). Before 373dbdd each Provision
// returned a new object. Provision must return an object of its own each
// time (a copy of the one it holds).
func TestAPVBeingSavedIsNotTheObjectTheLibraryHolds(t *testing.T) {
	w := newWorld(t, frameworkCase{objects: objects(ours())})
	claim := w.claim("test/data")
	opts := func() controller.ProvisionOptions {
		obj, _, err := w.indexers[classesGVR].GetByKey("fast")
		must(t, err)
		return controller.ProvisionOptions{PVC: claim, StorageClass: obj.(*storagev1.StorageClass), PVName: pvName}
	}
	w.answers = []answer{created}
	first, _, err := w.prov.Provision(w.ctx, opts())
	if err != nil || first == nil {
		t.Fatalf("first Provision = %v, %v", first, err)
	}
	libraryAfterProvision(first, claim) // the library, then its volume store holds first

	w.answers = nil // no CSI call may be made
	second, state, err := w.prov.Provision(w.ctx, opts())
	if err != nil || second == nil || state != controller.ProvisioningFinished {
		t.Fatalf("second Provision = %v, %v, %v", second, state, err)
	}
	if second.Name != first.Name {
		t.Errorf("second Provision returned PV %s, want %s", second.Name, first.Name)
	}
	if second == first {
		t.Errorf("the second Provision returned the same *PersistentVolume the library's volume store holds from the first: " +
			"the library's worker writes its claimRef and annotations map while the store's worker may encode it (data race)")
	}
	if sameMap(second.Annotations, first.Annotations) {
		t.Errorf("the second Provision's PV shares its annotations map with the first's")
	}
}

// sameMap reports whether a and b are one map (a write to one shows in
// the other).
func sameMap(a, b map[string]string) bool {
	if a == nil || b == nil {
		return false
	}
	const probe = "review.example.com/probe"
	a[probe] = "x"
	_, shared := b[probe]
	delete(a, probe)
	return shared
}

// TestARecreatedClaimGetsANewVolume: the claim test/data is
// provisioned and its PV is being saved when the claim is deleted and
// created again with the same name (a new UID): the new claim gets its own
// CreateVolume and PV, never the old claim's PV.
func TestARecreatedClaimGetsANewVolume(t *testing.T) {
	old := ours()
	again := ours(named("data", "0000aaaa-new0-4e8b-a1f2-0123456789ab"))
	runFramework(t, []frameworkCase{{
		name:    "same name, new UID",
		objects: objects(old),
		steps: []step{
			provision("test/data", created),
			remove(old),
			update(again),
			provision("test/data", created),
		},
		want: []string{create, provisioned,
			"> persistentvolumeclaims test/data deleted",
			"> persistentvolumeclaims test/data updated",
			"CreateVolume pvc-0000aaaa-new0-4e8b-a1f2-0123456789ab",
			"provision test/data: Finished, PV pvc-0000aaaa-new0-4e8b-a1f2-0123456789ab of id-pvc-0000aaaa-new0-4e8b-a1f2-0123456789ab"},
	}})
}

// TestOnlyTheClaimsOwnPVEndsTheSaving: a PV the cache shows for the
// claim's UID under another name (a PV pre-bound to the claim by an
// administrator) does not end the saving of the claim's own PV: the claim
// handed to Provision again still gets its own PV, without a CreateVolume;
// its own PV in the cache ends it, and the next Provision is the library's
// business again (it would not call: the PV exists).
func TestOnlyTheClaimsOwnPVEndsTheSaving(t *testing.T) {
	prebound := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "admin-pv"},
		Spec: v1.PersistentVolumeSpec{ClaimRef: &v1.ObjectReference{Namespace: "test", Name: "data", UID: claimUID}}}
	own := provisionedVolume()
	own.Spec.ClaimRef = &v1.ObjectReference{Namespace: "test", Name: "data", UID: claimUID}
	runFramework(t, []frameworkCase{{
		name:    "another PV of the claim, then its own",
		objects: objects(ours()),
		steps: []step{
			provision("test/data", created),
			update(prebound),
			provisionUnfiltered("test/data"),
			update(own),
			provisionUnfiltered("test/data", created),
		},
		want: []string{create, provisioned,
			"> persistentvolumes admin-pv updated",
			provisioned,
			"> persistentvolumes " + pvName + " updated",
			create, provisioned},
	}})
}
