package capacity

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkPlan measures a sweep's pure work at 100 nodes with local storage
// (100 segments) and 10 classes: deriving the segments and planning the
// 1,000 objects, when none exist yet (1,000 creates) and when all exist and
// are up to date (no writes).
func BenchmarkPlan(b *testing.B) {
	const numNodes, numClasses = 100, 10
	nodes, csiNodes := benchNodes(numNodes)
	var classes []*storagev1.StorageClass
	for i := range numClasses {
		classes = append(classes, newClass(fmt.Sprintf("class-%d", i)))
	}
	segs := Segments(driver, nodes, csiNodes)
	all := map[Key]Report{}
	var existing []*storagev1.CSIStorageCapacity
	for _, c := range classes {
		for _, s := range segs {
			all[Key{Class: c.Name, Segment: s.ID()}] = Report{AvailableBytes: 1 << 30}
			existing = append(existing, newCapacity(fmt.Sprintf("csisc-%d", len(existing)), c.Name, s.Labels()))
		}
	}

	for name, tc := range map[string]struct {
		existing   []*storagev1.CSIStorageCapacity
		wantWrites int
	}{
		"initial": {wantWrites: numNodes * numClasses},
		"steady":  {existing: existing},
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				r := Plan(ourPolicy(), State{Segments: Segments(driver, nodes, csiNodes), Classes: classes, Existing: tc.existing, Reports: all})
				if n := len(r.Create) + len(r.Update) + len(r.Delete); n != tc.wantWrites || len(r.Desired) != numNodes*numClasses {
					b.Fatalf("%d writes for %d desired objects, want %d for %d", n, len(r.Desired), tc.wantWrites, numNodes*numClasses)
				}
			}
		})
	}
}

// benchNodes are n nodes with the driver, each its own segment, and a few
// labels of the kind real nodes carry.
func benchNodes(n int) ([]*v1.Node, []*storagev1.CSINode) {
	var nodes []*v1.Node
	var csiNodes []*storagev1.CSINode
	for i := range n {
		name := fmt.Sprintf("node-%d", i)
		nodes = append(nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%3),
			"topology.test-driver/node": name,
		}}})
		csiNodes = append(csiNodes, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.CSINodeSpec{
			Drivers: []storagev1.CSINodeDriver{{Name: driver, TopologyKeys: []string{"topology.kubernetes.io/zone", "topology.test-driver/node"}}},
		}})
	}
	return nodes, csiNodes
}
