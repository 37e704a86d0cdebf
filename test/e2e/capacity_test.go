//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/xns-csi/csi-provisioner/test/localenv"
)

// capacityNamespace holds the CSIStorageCapacity objects.
const capacityNamespace = localenv.CapacityNamespace

// TestE2ECapacity runs --enable-capacity against the real API server, with
// the shipped RBAC and a driver of its own whose storage (10Gi) sits on
// node cap-node-a: with the Nodes and CSINodes kubelet would write for
// cap-node-a and cap-node-b, the sidecar publishes the capacity of each
// node's segment for a WaitForFirstConsumer class, owned by its pod,
// refreshes it after a volume is provisioned and deleted (the poll
// interval is an hour), exports upstream's gauges, and the garbage
// collector removes the objects with the pod.
func TestE2ECapacity(t *testing.T) {
	ctx := ctxFor(t)
	const driver = "capacity.csi.example.com"
	key := "topology." + driver + "/node"
	stack, err := world.StartStack(ctx, driver, []string{"--topology=" + key + "=cap-node-a", "--node-id=cap-node-a",
		"--capacity-bytes=" + strconv.FormatInt(10<<30, 10)})
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range []string{"cap-node-a", "cap-node-b"} {
		createNode(t, node, driver, key)
	}
	pod := createPod(t, capacityNamespace, fmt.Sprintf("cap-provisioner-%04d", rand.IntN(10000)))
	sidecar := startSidecarWithEnv(t, stack, "capacity", []string{"NAMESPACE=" + capacityNamespace, "POD_NAME=" + pod.Name},
		"--enable-capacity", "--capacity-ownerref-level=0", "--capacity-poll-interval=1h")
	late := lateBindingClass(t, "cap-late", driver)
	immediate := storageClass(t, "cap-now", driver)

	a := waitCapacity(t, driver, late, "cap-node-a", key, 10<<30)
	waitCapacity(t, driver, late, "cap-node-b", key, 0)
	if refs := a.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].Name != pod.Name || refs[0].UID != pod.UID ||
		refs[0].Controller == nil || !*refs[0].Controller {
		t.Errorf("owner references %+v, want the sidecar's pod %s as controller", refs, pod.Name)
	}
	if objs := capacityObjects(t, driver, immediate); len(objs) != 0 {
		t.Errorf("%d capacity objects for the immediately binding class, want none", len(objs))
	}
	body := scrape(t, sidecar)
	for _, want := range []string{"\ncsistoragecapacities_desired_goal 2\n", "\ncsistoragecapacities_desired_current 2\n",
		`workqueue_adds_total{name="csistoragecapacity"}`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", strings.TrimSpace(want))
		}
	}

	ns := namespace(t, "capacity")
	createPVC(t, ns, "data", late, onNode("cap-node-a"))
	pv := waitBound(t, ns, "data")
	size := pv.Spec.Capacity[v1.ResourceStorage]
	waitCapacity(t, driver, late, "cap-node-a", key, 10<<30-size.Value())
	if err := world.Kube.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCapacity(t, driver, late, "cap-node-a", key, 10<<30)

	sidecar.Stop(10 * time.Second)
	if err := world.Kube.CoreV1().Pods(capacityNamespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the garbage collector to delete the pod's capacity objects", func(context.Context) bool {
		return len(capacityObjects(t, driver, late)) == 0
	})
}

// startSidecarWithEnv starts this sidecar for stack s with environment
// variables (NAMESPACE, POD_NAME, NODE_NAME), and stops it when the test
// ends.
func startSidecarWithEnv(t *testing.T, s *localenv.Stack, id string, env []string, args ...string) *localenv.Sidecar {
	t.Helper()
	sc, err := world.StartSidecarWithEnv(ctxFor(t), s, id, env, args...)
	if sc != nil {
		t.Cleanup(func() { sc.Stop(10 * time.Second) })
	}
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// createNode creates a Node labeled with its name under key, and its
// CSINode listing driver with that topology key, as kubelet would; both
// are deleted after the test.
func createNode(t *testing.T, name, driver, key string) {
	t.Helper()
	ctx := context.Background()
	t.Cleanup(func() {
		_ = world.Kube.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
		_ = world.Kube.StorageV1().CSINodes().Delete(ctx, name, metav1.DeleteOptions{})
	})
	if err := world.CreateNode(ctx, name, driver, map[string]string{key: name}); err != nil {
		t.Fatal(err)
	}
}

// createPod creates a pod that stands for the sidecar's own (no kubelet
// runs it), deleted after the test.
func createPod(t *testing.T, namespace, name string) *v1.Pod {
	t.Helper()
	ctx := context.Background()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "csi-provisioner", Image: "csi-provisioner"}}}}
	created, err := world.Kube.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = world.Kube.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{}) })
	return created
}

// lateBindingClass creates a WaitForFirstConsumer class of driver, named
// uniquely from prefix.
func lateBindingClass(t *testing.T, prefix, driver string) string {
	t.Helper()
	ctx := context.Background()
	late := storagev1.VolumeBindingWaitForFirstConsumer
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"},
		Provisioner: driver, VolumeBindingMode: &late}
	class, err := world.Kube.StorageV1().StorageClasses().Create(ctx, class, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = world.Kube.StorageV1().StorageClasses().Delete(ctx, class.Name, metav1.DeleteOptions{}) })
	return class.Name
}

// onNode is the scheduler's choice of a node for a late-binding claim.
func onNode(node string) pvcOption {
	return func(c *v1.PersistentVolumeClaim) {
		c.Annotations = map[string]string{localenv.SelectedNodeAnnotation: node}
	}
}

// capacityObjects returns driver's CSIStorageCapacity objects of a class.
func capacityObjects(t *testing.T, driver, class string) []storagev1.CSIStorageCapacity {
	t.Helper()
	list, err := world.Kube.StorageV1().CSIStorageCapacities(capacityNamespace).List(context.Background(),
		metav1.ListOptions{LabelSelector: labels.Set{"csi.storage.k8s.io/drivername": driver}.String()})
	if err != nil {
		t.Fatal(err)
	}
	var out []storagev1.CSIStorageCapacity
	for _, c := range list.Items {
		if c.StorageClassName == class {
			out = append(out, c)
		}
	}
	return out
}

// waitCapacity waits until the class has one object for the segment
// key=value, reporting bytes, and returns it.
func waitCapacity(t *testing.T, driver, class, value, key string, bytes int64) storagev1.CSIStorageCapacity {
	t.Helper()
	var found storagev1.CSIStorageCapacity
	waitFor(t, fmt.Sprintf("capacity %d of class %s on %s", bytes, class, value), func(context.Context) bool {
		var matching []storagev1.CSIStorageCapacity
		for _, c := range capacityObjects(t, driver, class) {
			if c.NodeTopology != nil && c.NodeTopology.MatchLabels[key] == value {
				matching = append(matching, c)
			}
		}
		if len(matching) != 1 || matching[0].Capacity == nil || matching[0].Capacity.Value() != bytes {
			return false
		}
		found = matching[0]
		return true
	})
	return found
}
