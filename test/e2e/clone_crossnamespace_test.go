//go:build e2e

package e2e

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// cloneFinalizer protects a claim cloned by a claim naming its namespace.
const cloneFinalizer = datasource.CrossNamespaceCloneFinalizer

// testCrossNamespaceClone: Bob's claim in test clones Alice's claim in prod
// through spec.dataSourceRef.namespace, as the upstream provisioner v6.4.0
// allows. Without a grant it is refused with an event naming the grant to
// create; once Alice's grant exists it binds with her data. Alice deletes her
// claim while a slow driver copies it: the clone finalizer holds it until
// the clone is bound, and then it goes.
func testCrossNamespaceClone(t *testing.T) {
	ensureGrantCRD(t)
	ctx := ctxFor(t)
	slow, err := world.StartStack(ctx, "slowclone.csi.example.com", []string{"--restore-delay=5s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := world.StartSidecar(ctx, slow, "slowclone", "--timeout=30s"); err != nil {
		t.Fatal(err)
	}
	class := storageClass(t, "xclone", slow.Name)
	prod, test := namespace(t, "prod"), namespace(t, "test")
	createPVC(t, prod, "data", class)
	writeData(t, slow, waitBound(t, prod, "data"), "alice's data")

	createPVC(t, test, "copy", class, cloningFrom(prod, "data"))
	waitEvent(t, test, "copy", "ProvisioningFailed", `create one with from {group: "", kind: PersistentVolumeClaim, namespace: `+test+
		`} and to {group: "", kind: PersistentVolumeClaim, name: data}`)
	staysPending(t, test, "copy")

	claimGrant(t, prod, "clones", test, "data")
	waitFor(t, "the clone finalizer on "+prod+"/data", func(ctx context.Context) bool {
		c, err := world.Kube.CoreV1().PersistentVolumeClaims(prod).Get(ctx, "data", metav1.GetOptions{})
		return err == nil && slices.Contains(c.Finalizers, cloneFinalizer)
	})
	if err := world.Kube.CoreV1().PersistentVolumeClaims(prod).Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	source, err := world.Kube.CoreV1().PersistentVolumeClaims(prod).Get(ctx, "data", metav1.GetOptions{})
	if err != nil || source.DeletionTimestamp == nil || !slices.Contains(source.Finalizers, cloneFinalizer) {
		t.Fatalf("the source claim should wait for the clone in deletion, got %v (err %v)", source, err)
	}

	if got := readData(t, slow, waitBound(t, test, "copy")); got != "alice's data" {
		t.Errorf("cloned data = %q, want %q", got, "alice's data")
	}
	waitFor(t, "the source claim to be deleted once the clone is bound", func(ctx context.Context) bool {
		_, err := world.Kube.CoreV1().PersistentVolumeClaims(prod).Get(ctx, "data", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

// cloningFrom makes the claim clone the claim name in namespace.
func cloningFrom(namespace, name string) pvcOption {
	return func(c *v1.PersistentVolumeClaim) {
		c.Spec.DataSourceRef = &v1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: name, Namespace: &namespace}
	}
}

// claimGrant creates a v1 ReferenceGrant in namespace allowing claims of
// fromNamespace to clone the claim name there.
func claimGrant(t *testing.T, namespace, grantName, fromNamespace, name string) {
	t.Helper()
	target := gatewayv1.ObjectName(name)
	g := &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Name: grantName, Namespace: namespace}, Spec: gatewayv1.ReferenceGrantSpec{
		From: []gatewayv1.ReferenceGrantFrom{{Kind: "PersistentVolumeClaim", Namespace: gatewayv1.Namespace(fromNamespace)}},
		To:   []gatewayv1.ReferenceGrantTo{{Kind: "PersistentVolumeClaim", Name: &target}},
	}}
	if _, err := world.Gateway.GatewayV1().ReferenceGrants(namespace).Create(context.Background(), g, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
