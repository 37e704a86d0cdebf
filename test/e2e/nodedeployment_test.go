//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestE2ENodeDeployment runs the sidecar of node nd-node-a with
// --node-deployment (NODE_NAME=nd-node-a) next to a driver whose storage is
// on that node, with one worker so that it decides on claims in order. The
// cluster has no Node or CSINode for it: the topology comes from the
// driver's NodeGetInfo. A claim scheduled to another node stays pending
// without an event from it; one scheduled to nd-node-a binds; an
// immediately bound claim is claimed for nd-node-a and binds; the volume is
// deleted by this node's sidecar; and with --enable-capacity it publishes
// its node's capacity under a managed-by label of its own.
func TestE2ENodeDeployment(t *testing.T) {
	ctx := ctxFor(t)
	const driver, node = "node.csi.example.com", "nd-node-a"
	key := "topology." + driver + "/node"
	stack, err := world.StartStack(ctx, driver, []string{"--topology=" + key + "=" + node, "--node-id=" + node})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteCapacityObjects(t, driver) }) // after the sidecar stopped
	startSidecarWithEnv(t, stack, node, []string{"NODE_NAME=" + node, "NAMESPACE=" + capacityNamespace},
		"--node-deployment", "--node-deployment-base-delay=100ms", "--node-deployment-max-delay=1s", "--worker-threads=1",
		"--enable-capacity", "--capacity-ownerref-level=-1")
	late := lateBindingClass(t, "nd-late", driver)
	immediate := storageClass(t, "nd-now", driver)
	ns := namespace(t, "node")

	createPVC(t, ns, "theirs", late, onNode("nd-node-b"))
	waitFor(t, "the PV controller to hand claim theirs to the driver", func(ctx context.Context) bool {
		claim, err := world.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "theirs", metav1.GetOptions{})
		return err == nil && claim.Annotations["volume.kubernetes.io/storage-provisioner"] == driver
	})
	createPVC(t, ns, "mine", late, onNode(node))
	pv := waitBound(t, ns, "mine")
	// With one worker, the sidecar decided on theirs before mine.
	staysPending(t, ns, "theirs")
	if events := eventsFrom(t, ns, "theirs", driver); len(events) > 0 {
		t.Errorf("the sidecar of %s reported on a claim of another node: %v", node, events)
	}

	createPVC(t, ns, "any-node", immediate)
	other := waitBound(t, ns, "any-node")
	claim, err := world.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "any-node", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := claim.Annotations["volume.kubernetes.io/selected-node"]; got != node {
		t.Errorf("the immediately bound claim was assigned to %q, want %q", got, node)
	}

	// The driver's default pool of 100Gi, less the two volumes: refreshed
	// after each was provisioned.
	mineSize, otherSize := pv.Spec.Capacity[v1.ResourceStorage], other.Spec.Capacity[v1.ResourceStorage]
	waitCapacity(t, driver, late, node, key, 100<<30-mineSize.Value()-otherSize.Value())
	if objs := capacityObjects(t, driver, late); objs[0].Labels["csi.storage.k8s.io/managed-by"] != "external-provisioner-"+node {
		t.Errorf("capacity object labels %v, want managed-by external-provisioner-%s", objs[0].Labels, node)
	}

	for _, v := range []*v1.PersistentVolume{pv, other} {
		if err := world.Kube.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, v.Spec.ClaimRef.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the sidecar of "+node+" to delete the volume of "+v.Spec.ClaimRef.Name, func(ctx context.Context) bool {
			_, err := world.Kube.CoreV1().PersistentVolumes().Get(ctx, v.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
	}
}

// eventsFrom returns the events on a claim that a component of driver
// reported.
func eventsFrom(t *testing.T, namespace, name, driver string) []string {
	t.Helper()
	events, err := world.Kube.CoreV1().Events(namespace).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range events.Items {
		if strings.Contains(ev.Source.Component, driver) || strings.Contains(ev.ReportingController, driver) {
			out = append(out, ev.Reason+": "+ev.Message)
		}
	}
	return out
}

// deleteCapacityObjects deletes driver's CSIStorageCapacity objects, which
// a sidecar without an owner for them leaves behind.
func deleteCapacityObjects(t *testing.T, driver string) {
	t.Helper()
	err := world.Kube.StorageV1().CSIStorageCapacities(capacityNamespace).DeleteCollection(context.Background(), metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: labels.Set{"csi.storage.k8s.io/drivername": driver}.String()})
	if err != nil {
		t.Errorf("deleting the capacity objects of %s: %v", driver, err)
	}
}
