package sidecar

import (
	"context"
	"strings"
	"testing"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// Clones of a claim in another namespace (the upstream provisioner v6.4.0's
// cross-namespace PVC data source): Bob's claim test/copy clones Alice's
// claim prod/data when a ReferenceGrant in prod allows claims in test to
// use it.

// noClaimGrantEvent is the refusal of test/copy without a grant: it names
// the grant to create.
const noClaimGrantEvent = `no ReferenceGrant in namespace "prod" allows PersistentVolumeClaims in namespace "test" to use PersistentVolumeClaim "data": ` +
	`create one with from {group: "", kind: PersistentVolumeClaim, namespace: test} and to {group: "", kind: PersistentVolumeClaim, name: data}`

// fromClaim makes the claim clone the claim name in namespace, naming the
// namespace in spec.dataSourceRef.
func fromClaim(namespace, name string) claimOption {
	return func(c *v1.PersistentVolumeClaim) {
		c.Spec.DataSourceRef = &v1.TypedObjectReference{Kind: datasource.ClaimKind, Name: name, Namespace: &namespace}
	}
}

// createClaimGrant creates the ReferenceGrant grantName in namespace that
// lets claims in fromNamespace clone the claim name there ("" = every
// claim there).
func (e *env) createClaimGrant(namespace, grantName, fromNamespace, claim string) {
	e.t.Helper()
	to := gatewayv1.ReferenceGrantTo{Group: "", Kind: datasource.ClaimKind}
	if claim != "" {
		to.Name = (*gatewayv1.ObjectName)(&claim)
	}
	g := &gatewayv1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Name: grantName, Namespace: namespace},
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: "", Kind: datasource.ClaimKind, Namespace: gatewayv1.Namespace(fromNamespace)}},
			To:   []gatewayv1.ReferenceGrantTo{to},
		},
	}
	if _, err := e.gateway.GatewayV1().ReferenceGrants(namespace).Create(e.ctx, g, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// boundClaim creates the claim namespace/name, which this sidecar
// provisions, binds it as the PV controller would, and returns its PV.
func (e *env) boundClaim(namespace, name string) *v1.PersistentVolume {
	e.t.Helper()
	claim := e.createClaim(namespace, name)
	pv := e.waitForPV(claim)
	e.bind(claim, pv.Name)
	return pv
}

// assertClonedFrom checks the claim's last CreateVolume asked for a clone
// of the source volume.
func assertClonedFrom(t *testing.T, e *env, claim *v1.PersistentVolumeClaim, source *v1.PersistentVolume) {
	t.Helper()
	reqs := e.createRequests(claim)
	if len(reqs) == 0 {
		t.Fatal("no CreateVolume for the claim")
	}
	if got := reqs[len(reqs)-1].GetVolumeContentSource().GetVolume().GetVolumeId(); got != source.Spec.CSI.VolumeHandle {
		t.Errorf("CreateVolume content source volume = %q, want the source volume %q", got, source.Spec.CSI.VolumeHandle)
	}
}

func TestCrossNamespaceCloneWithAGrantIsClonedFromTheSourceVolume(t *testing.T) {
	e := startEnv(t)
	source := e.boundClaim("prod", "data")
	e.createClaimGrant("prod", "bar", "test", "data")
	copied := e.createClaim("test", "copy", fromClaim("prod", "data"))
	e.waitForPV(copied)
	assertClonedFrom(t, e, copied, source)
	// The controller library may provision a claim once more when a
	// re-queue overtakes the PV in its cache (CreateVolume is idempotent):
	// each provisioning counts.
	e.waitFor("cross_namespace_persistentvolumeclaim_provision_total{fast} to count each CreateVolume of the clone", func() bool {
		got := e.metric("cross_namespace_persistentvolumeclaim_provision_total", "storage_class", className)
		return got >= 1 && got == float64(len(e.createRequests(copied)))
	})
}

// TestCrossNamespaceCloneWithoutAGrantIsRefusedAndHoldsNothing: the claim
// is told exactly which grant is missing, the driver is not called, and the
// source's clone finalizer (left by an earlier clone) is released: naming a
// claim of another namespace does not keep it from being deleted.
func TestCrossNamespaceCloneWithoutAGrantIsRefusedAndHoldsNothing(t *testing.T) {
	e := startEnv(t)
	e.createClaimGrant("prod", "other-namespace", "staging", "data")
	e.createClaimGrant("test", "wrong-side", "test", "data") // grants live in the source's namespace
	e.createGrant("prod", "snapshots", "test", "")           // a grant for snapshots is not one for claims
	e.createClaimGrant("prod", "other-claim", "test", "other")
	// A clone of the missing claim prod/other passes its grant check: the
	// grant cache holds that grant, and so every grant written before it.
	probe := e.createClaim("test", "probe", fromClaim("prod", "other"))
	e.waitForEvent(probe, v1.EventTypeWarning, "ProvisioningFailed", "source PersistentVolumeClaim prod/other does not exist")
	copied := e.createClaim("test", "copy", fromClaim("prod", "data"))
	e.waitForEvent(copied, v1.EventTypeWarning, "ProvisioningFailed", noClaimGrantEvent)

	e.createClaim("prod", "data", func(c *v1.PersistentVolumeClaim) {
		c.Finalizers = []string{datasource.CrossNamespaceCloneFinalizer} // from an earlier clone
		c.Annotations["volume.kubernetes.io/storage-provisioner"] = "other.example.com"
	})
	e.waitFor("the clone finalizer of prod/data to be released", func() bool {
		return !hasString(e.claimFinalizers("prod", "data"), datasource.CrossNamespaceCloneFinalizer)
	})
	e.noPV(copied)
	if n := len(e.createRequests(copied)); n != 0 {
		t.Errorf("driver got %d CreateVolume calls without a grant, want 0", n)
	}
}

func TestGrantCreatedLaterRequeuesTheCrossNamespaceCloneAtOnce(t *testing.T) {
	// The retry backoff of startEnv is one hour: the clone can only be
	// provisioned in this test if the grant's arrival re-queues it.
	e := startEnv(t)
	source := e.boundClaim("prod", "data")
	copied := e.createClaim("test", "copy", fromClaim("prod", "data"))
	e.waitForEvent(copied, v1.EventTypeWarning, "ProvisioningFailed", noClaimGrantEvent)
	e.noPV(copied)

	e.createClaimGrant("prod", "bar", "test", "") // no name: every claim in prod
	e.waitForPV(copied)
	assertClonedFrom(t, e, copied, source)
}

func TestCrossNamespaceCloneOfAnUnboundClaimWaitsForItsBinding(t *testing.T) {
	e := startEnv(t)
	source := e.createClaim("prod", "data")
	pv := e.waitForPV(source) // provisioned, but not bound: no PV controller runs here
	e.createClaimGrant("prod", "bar", "test", "data")
	copied := e.createClaim("test", "copy", fromClaim("prod", "data"))
	e.waitForEvent(copied, v1.EventTypeWarning, "ProvisioningFailed", "source PersistentVolumeClaim prod/data is not bound yet")
	e.noPV(copied)

	// With the one-hour backoff only the source's binding can re-queue the
	// clone.
	e.bind(source, pv.Name)
	e.waitForPV(copied)
	assertClonedFrom(t, e, copied, pv)
}

// TestCrossNamespaceCloneSourceDeletionWaitsForTheClone: Alice deletes her
// claim while Bob's clone of it is in the driver; the clone finalizer holds
// the claim (a grant revoked meanwhile does not release it, KEP-3294,
// Security, case 2) until the clone has its PV.
func TestCrossNamespaceCloneSourceDeletionWaitsForTheClone(t *testing.T) {
	e := startEnv(t, oneProtectionWorker())
	source := e.boundClaim("prod", "data")
	e.createClaimGrant("prod", "bar", "test", "data")
	entered, release := make(chan struct{}), make(chan struct{})
	e.driver.SetCreateVolumeHook(blockFirstCreate(entered, release))
	copied := e.createClaim("test", "copy", fromClaim("prod", "data"))
	e.await(entered, "CreateVolume")
	if f := e.claimFinalizers("prod", "data"); !hasString(f, datasource.CrossNamespaceCloneFinalizer) {
		t.Fatalf("source finalizers during CreateVolume = %v, want %s", f, datasource.CrossNamespaceCloneFinalizer)
	}

	e.requestDeletion("prod", "data")
	e.deleteGrant("prod", "bar")
	e.protectionSeen() // source protection has decided on both
	if f := e.claimFinalizers("prod", "data"); !hasString(f, datasource.CrossNamespaceCloneFinalizer) {
		t.Fatalf("source finalizers = %v: released while the clone is in the driver", f)
	}

	close(release)
	e.waitForPV(copied)
	assertClonedFrom(t, e, copied, source)
	e.waitFor("the clone finalizer to be removed once the clone has its PV", func() bool {
		return !hasString(e.claimFinalizers("prod", "data"), datasource.CrossNamespaceCloneFinalizer)
	})
}

// TestCrossNamespaceCloneReleasesItsSourceWhenItEnds: a clone whose attempt
// failed keeps its source while it may be retried, and releases it when its
// grant is revoked, or when it is deleted.
func TestCrossNamespaceCloneReleasesItsSourceWhenItEnds(t *testing.T) {
	for _, end := range []struct {
		name string
		do   func(e *env, copied *v1.PersistentVolumeClaim)
	}{
		{"the grant is revoked", func(e *env, _ *v1.PersistentVolumeClaim) { e.deleteGrant("prod", "bar") }},
		{"the clone is deleted", func(e *env, copied *v1.PersistentVolumeClaim) {
			if err := e.kube.CoreV1().PersistentVolumeClaims("test").Delete(e.ctx, copied.Name, metav1.DeleteOptions{}); err != nil {
				e.t.Fatal(err)
			}
		}},
	} {
		t.Run(end.name, func(t *testing.T) {
			e := startEnv(t, oneProtectionWorker())
			e.boundClaim("prod", "data")
			e.createClaimGrant("prod", "bar", "test", "data")
			e.driver.SetCreateVolumeHook(func(context.Context, *csispec.CreateVolumeRequest) (*csispec.CreateVolumeResponse, error, bool) {
				return nil, errInvalid, true // a final error: the clone stays pending
			})
			copied := e.createClaim("test", "copy", fromClaim("prod", "data"))
			e.waitForEvent(copied, v1.EventTypeWarning, "ProvisioningFailed", "the driver rejects this request")
			e.protectionSeen()
			if f := e.claimFinalizers("prod", "data"); !hasString(f, datasource.CrossNamespaceCloneFinalizer) {
				t.Fatalf("source finalizers = %v: released while the clone is pending", f)
			}
			end.do(e, copied)
			e.waitFor("the clone finalizer to be removed", func() bool {
				return !hasString(e.claimFinalizers("prod", "data"), datasource.CrossNamespaceCloneFinalizer)
			})
		})
	}
}

func TestFeatureGateOffRefusesCrossNamespaceClones(t *testing.T) {
	e := startEnv(t, gateOff())
	e.boundClaim("prod", "data")
	e.createClaimGrant("prod", "bar", "test", "data")
	copied := e.createClaim("test", "copy", fromClaim("prod", "data"))
	ev := e.waitForEvent(copied, v1.EventTypeWarning, "CrossNamespaceSourceDisabled", "feature gate is off")
	if !strings.Contains(ev.Message, "PersistentVolumeClaim prod/data") {
		t.Errorf("event %q does not name the source", ev.Message)
	}
	e.noPV(copied)
	if n := len(e.createRequests(copied)); n != 0 {
		t.Errorf("driver got %d CreateVolume calls with the gate off, want 0", n)
	}
}

// requestDeletion marks the claim deleted as the API server does while a
// finalizer holds it.
func (e *env) requestDeletion(namespace, name string) {
	e.t.Helper()
	c, err := e.kube.CoreV1().PersistentVolumeClaims(namespace).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	c.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	if _, err := e.kube.CoreV1().PersistentVolumeClaims(namespace).Update(e.ctx, c, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}
