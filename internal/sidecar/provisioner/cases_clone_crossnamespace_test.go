package provisioner

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	csiclient "github.com/xns-csi/csi-provisioner/internal/sidecar/csi"
)

// Clones of a claim in another namespace, as the upstream provisioner v6.4.0
// makes them (its TestProvisionFromPVC, "xns PersistentVolumeClaim data
// source" and "when CrossNamespaceVolumeDataSource feature enabled"): the
// claim test/data clones prod/src when the grant prod/claims allows it. Which
// grants allow it is internal/shared/claimsource's table; these cases follow a clone
// through the provisioner: what it writes, what it asks the driver, and
// what it refuses without a word to either.

// prodSource is the claim prod/src bound to the PV pv-src of driver;
// options change the claim.
func prodSource(opts ...claimOption) (*v1.PersistentVolumeClaim, *v1.PersistentVolume) {
	src, pv := boundClaim()
	src.Namespace, pv.Spec.ClaimRef.Namespace = "prod", "prod"
	for _, o := range opts {
		o(src)
	}
	return src, pv
}

// claimsGrant is the ReferenceGrant prod/claims: claims in "test" may clone
// every claim in prod.
func claimsGrant() *gatewayv1.ReferenceGrant {
	return &gatewayv1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Name: "claims", Namespace: "prod"},
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: "", Kind: datasource.ClaimKind, Namespace: "test"}},
			To:   []gatewayv1.ReferenceGrantTo{{Group: "", Kind: datasource.ClaimKind}},
		},
	}
}

// The transcript lines of a clone of prod/src.
const (
	protectProdSource = "patch persistentvolumeclaims prod/src: add /metadata/finalizers [" + datasource.CrossNamespaceCloneFinalizer + "]"
	createFromSource  = create + " from volume vol-src"
)

func TestCloneAcrossNamespaces(t *testing.T) {
	src, srcPV := prodSource()
	pending, _ := prodSource(func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeName, c.Status.Phase = "", v1.ClaimPending })
	otherClass, _ := prodSource(func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("slow") })
	block, _ := prodSource(func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeMode = ptr.To(v1.PersistentVolumeBlock) })
	otherDriverPV := srcPV.DeepCopy()
	otherDriverPV.Spec.CSI.Driver = "wrong.com"
	cannotClone := capsWith(func(c *csiclient.Capabilities) { c.CloneVolume = false })
	refused := func(reason string) []string { return []string{"provision test/data: NoChange, refused " + reason} }
	runFramework(t, []frameworkCase{
		{
			name:    "a claim in another namespace is protected, then cloned, when a grant allows it",
			objects: objects(ours(cloning("prod", "src")), src, srcPV, claimsGrant()),
			steps:   []step{provision("test/data", created)},
			want:    []string{protectProdSource, createFromSource, provisioned},
		},
		{
			name:    "without a grant nothing is written or called, until the grant arrives",
			objects: objects(ours(cloning("prod", "src")), src, srcPV),
			steps:   []step{provision("test/data"), update(claimsGrant()), provision("test/data", created)},
			want: []string{"provision test/data: NoChange, refused ReferenceGrantMissing",
				"> grant prod/claims created", protectProdSource, createFromSource, provisioned},
		},
		{
			name:    "a grant for the namespace's snapshots does not allow a clone",
			objects: objects(ours(cloning("prod", "src")), src, srcPV, grant()),
			steps:   []step{provision("test/data")},
			want:    refused("ReferenceGrantMissing"),
		},
		{
			name:    "a source claim that is not bound yet is waited for without writing",
			objects: objects(ours(cloning("prod", "src")), pending, srcPV, claimsGrant()),
			steps:   []step{provision("test/data"), update(src), provision("test/data", created)},
			want: []string{"provision test/data: NoChange, refused SourceClaimNotBound",
				"> persistentvolumeclaims prod/src updated", protectProdSource, createFromSource, provisioned},
		},
		// The clone checks of upstream's cases, on the source in prod.
		{name: "a missing source claim is refused", objects: objects(ours(cloning("prod", "src")), srcPV, claimsGrant()),
			steps: []step{provision("test/data")}, want: refused("SourceClaimNotFound")},
		{name: "a source volume of another driver is refused", objects: objects(ours(cloning("prod", "src")), src, otherDriverPV, claimsGrant()),
			steps: []step{provision("test/data")}, want: refused("SourceClaimOfOtherDriver")},
		{name: "a block source is not cloned as a filesystem", objects: objects(ours(cloning("prod", "src")), block, srcPV, claimsGrant()),
			steps: []step{provision("test/data")}, want: refused("VolumeModeMismatch")},
		{name: "a request smaller than the source is refused",
			objects: objects(ours(cloning("prod", "src"), requesting("1Mi")), src, srcPV, claimsGrant()),
			steps:   []step{provision("test/data")}, want: refused("RequestedSizeTooSmall")},
		// Upstream clones across classes; here a clone keeps its source's
		// class, across namespaces as within one.
		{name: "a source of another class is refused", objects: objects(ours(cloning("prod", "src")), otherClass, srcPV, claimsGrant()),
			steps: []step{provision("test/data")}, want: refused("StorageClassMismatch")},
		{name: "a driver that cannot clone is not asked to", caps: cannotClone,
			objects: objects(ours(cloning("prod", "src")), src, srcPV, claimsGrant()),
			steps:   []step{provision("test/data")}, want: refused("CloneUnsupported")},
	})
}
