package localenv

import (
	"context"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CapacityNamespace holds the CSIStorageCapacity objects of a sidecar
// started with --enable-capacity and NAMESPACE set to it: the namespace of
// the capacity Role in deploy/csi-provisioner/rbac.yaml, which the sidecar
// runs with.
const CapacityNamespace = "default"

// SelectedNodeAnnotation is where the scheduler writes the node it chose
// for a WaitForFirstConsumer claim; the provisioner provisions the claim
// once it is set. No scheduler runs here: whoever creates such a claim sets
// it.
const SelectedNodeAnnotation = "volume.kubernetes.io/selected-node"

// CreateNode creates a Node with labels and its CSINode listing driver with
// the labels' keys as topology keys, as kubelet would when the driver's
// node plugin registers: the local control plane has no kubelet, and
// capacity tracking and late binding derive the topology segments from
// these two objects.
func (e *Env) CreateNode(ctx context.Context, name, driver string, labels map[string]string) error {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := e.Kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("node %s: %w", name, err)
	}
	csiNode := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.CSINodeSpec{
		Drivers: []storagev1.CSINodeDriver{{Name: driver, NodeID: name, TopologyKeys: slices.Sorted(maps.Keys(labels))}}}}
	if _, err := e.Kube.StorageV1().CSINodes().Create(ctx, csiNode, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("CSINode %s: %w", name, err)
	}
	return nil
}
