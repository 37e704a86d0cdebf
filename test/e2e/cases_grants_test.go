//go:build e2e

package e2e

import (
	"context"
	"github.com/xns-csi/csi-provisioner/test/localenv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testGrantCRDInstalledLater: the sidecar started without the ReferenceGrant
// CRD; same-namespace provisioning works, a cross-namespace claim gets an
// event naming what is missing, and once the CRD and a grant exist the
// claim binds without restarting the sidecar.
func testGrantCRDInstalledLater(t *testing.T) {
	if _, err := world.Kube.Discovery().ServerResourcesForGroupVersion("gateway.networking.k8s.io/v1"); err == nil {
		t.Skip("the ReferenceGrant CRD is already installed: this case must run first")
	}
	class := storageClass(t, "crd-later", localenv.LocalDriver)
	prod, test := namespace(t, "prod"), namespace(t, "test")
	sourceWithSnapshot(t, world.Local, prod, class, "backup", "prod data")

	createPVC(t, prod, "same-ns", class, restoring("", "backup"))
	waitBound(t, prod, "same-ns")

	createPVC(t, test, "cross", class, restoring(prod, "backup"))
	waitEvent(t, test, "cross", "ProvisioningFailed", "is the CRD installed?")
	staysPending(t, test, "cross")

	grant(t, prod, "allow-test", test, "backup") // installs the CRD first
	pv := waitBound(t, test, "cross")
	if got := readData(t, world.Local, pv); got != "prod data" {
		t.Errorf("restored data = %q, want %q", got, "prod data")
	}
}

// testKEPTestPlan: the four e2e cases of KEP-3294's test plan, with the data
// of the source volume checked in the restored one.
func testKEPTestPlan(t *testing.T) {
	ensureGrantCRD(t)
	class := storageClass(t, "kep", localenv.LocalDriver)
	prod, test := namespace(t, "prod"), namespace(t, "test")
	sourceWithSnapshot(t, world.Local, prod, class, "snap", "kep data")

	t.Run("cross-namespace with a grant is provisioned", func(t *testing.T) {
		grant(t, prod, "allow", test, "snap")
		createPVC(t, test, "allowed", class, restoring(prod, "snap"))
		if got := readData(t, world.Local, waitBound(t, test, "allowed")); got != "kep data" {
			t.Errorf("restored data = %q", got)
		}
	})
	t.Run("cross-namespace without a grant is not provisioned", func(t *testing.T) {
		other := namespace(t, "other")
		createPVC(t, other, "refused", class, restoring(prod, "snap"))
		waitEvent(t, other, "refused", "ProvisioningFailed", "no ReferenceGrant in namespace \""+prod+"\"")
		staysPending(t, other, "refused")
	})
	t.Run("same namespace with an empty namespace needs no grant", func(t *testing.T) {
		createPVC(t, prod, "same", class, restoring("", "snap"))
		if got := readData(t, world.Local, waitBound(t, prod, "same")); got != "kep data" {
			t.Errorf("restored data = %q", got)
		}
	})
	t.Run("same namespace named explicitly needs a grant", func(t *testing.T) {
		createPVC(t, prod, "explicit", class, restoring(prod, "snap"))
		waitEvent(t, prod, "explicit", "ProvisioningFailed", "no ReferenceGrant")
		staysPending(t, prod, "explicit")
	})
}

// testStory1 plays KEP-3294's Story 1 literally: Alice's grant bar in prod,
// Bob's claim foo-testing in test restoring foo-backup.
func testStory1(t *testing.T) {
	ensureGrantCRD(t)
	class := storageClass(t, "story1", localenv.LocalDriver)
	prod, test := exactNamespace(t, "prod"), exactNamespace(t, "test")
	sourceWithSnapshot(t, world.Local, prod, class, "foo-backup", "production data")
	grant(t, prod, "bar", test, "foo-backup")
	createPVC(t, test, "foo-testing", class, restoring(prod, "foo-backup"))
	pv := waitBound(t, test, "foo-testing")
	if got := readData(t, world.Local, pv); got != "production data" {
		t.Errorf("foo-testing holds %q, want the data of prod's volume", got)
	}
}

// testGrantCreatedAfterClaim: a claim refused for want of a grant binds once
// the grant appears. How soon is logged, not asserted: the component tests
// prove the re-queue on the grant event (with a one-hour retry backoff) and
// make bench measures the latency.
func testGrantCreatedAfterClaim(t *testing.T) {
	ensureGrantCRD(t)
	class := storageClass(t, "late", localenv.LocalDriver)
	prod, test := namespace(t, "prod"), namespace(t, "test")
	sourceWithSnapshot(t, world.Local, prod, class, "snap", "late data")
	createPVC(t, test, "waiting", class, restoring(prod, "snap"))
	waitEvent(t, test, "waiting", "ProvisioningFailed", "no ReferenceGrant")
	// An unchanged refusal is not attempted again, so the logged latency
	// is the grant event's re-queue, not a retry.
	start := time.Now()
	grant(t, prod, "late", test, "")
	waitBound(t, test, "waiting")
	t.Logf("grant created -> PVC bound: %v", time.Since(start))
}

// testGrantRevoked: a grant revoked before provisioning refuses the claim;
// a grant deleted after binding leaves the volume alone.
func testGrantRevoked(t *testing.T) {
	ensureGrantCRD(t)
	class := storageClass(t, "revoke", localenv.LocalDriver)
	prod, test := namespace(t, "prod"), namespace(t, "test")
	sourceWithSnapshot(t, world.Local, prod, class, "snap", "data")

	grant(t, prod, "kept", test, "snap")
	createPVC(t, test, "bound", class, restoring(prod, "snap"))
	pv := waitBound(t, test, "bound")

	revoke(t, prod, "kept")
	createPVC(t, test, "after-revoke", class, restoring(prod, "snap"))
	// The refusal shows that the sidecar has the revocation.
	waitEvent(t, test, "after-revoke", "ProvisioningFailed", "no ReferenceGrant")
	staysPending(t, test, "after-revoke")

	current, err := world.Kube.CoreV1().PersistentVolumes().Get(context.Background(), pv.Name, metav1.GetOptions{})
	if err != nil || current.DeletionTimestamp != nil {
		t.Fatalf("the PV of the bound claim is gone or being deleted after the grant was deleted (err %v)", err)
	}
	if got := readData(t, world.Local, pv); !strings.Contains(got, "data") {
		t.Errorf("the bound volume's data changed: %q", got)
	}
}
