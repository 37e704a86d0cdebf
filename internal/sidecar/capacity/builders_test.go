package capacity

import (
	"fmt"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The names of upstream's capacity_test.go.
const (
	driver    = "test-driver"
	namespace = "testns"
)

var (
	// owner is the StatefulSet that owns the objects unless a case says
	// otherwise.
	owner = metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "test-driver",
		UID: "309cd460-2d62-4f40-bbcf-b7765aac5a6d", Controller: ptrTo(true)}
	layer0      = map[string]string{"layer0": "foo"}
	layer0other = map[string]string{"layer0": "bar"}
	deep        = map[string]string{"layer0": "foo", "layer1": "X", "layer2": "A"}
	deepOther   = map[string]string{"layer0": "foo", "layer1": "X", "layer2": "B"}
)

func ptrTo[T any](v T) *T { return &v }

// ourPolicy is the policy of the tested controller: upstream's driver,
// namespace and default owner.
func ourPolicy() Policy {
	o := owner
	return Policy{DriverName: driver, ManagedBy: DefaultManagedBy, Namespace: namespace, Owner: &o}
}

func segments(labels ...map[string]string) []Segment {
	var out []Segment
	for _, l := range labels {
		out = append(out, NewSegment(l))
	}
	return out
}

type classOption func(*storagev1.StorageClass)

// newClass is a WaitForFirstConsumer class of the driver.
func newClass(name string, opts ...classOption) *storagev1.StorageClass {
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	c := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: driver, VolumeBindingMode: &mode}
	for _, o := range opts {
		o(c)
	}
	return c
}

func bindsImmediately() classOption {
	return func(c *storagev1.StorageClass) { c.VolumeBindingMode = ptrTo(storagev1.VolumeBindingImmediate) }
}

func ofDriver(name string) classOption {
	return func(c *storagev1.StorageClass) { c.Provisioner = name }
}

func withParameters(p map[string]string) classOption {
	return func(c *storagev1.StorageClass) { c.Parameters = p }
}

type capacityOption func(*storagev1.CSIStorageCapacity)

// newCapacity is an object of ours (labels, namespace, owner) with 1Gi
// available.
func newCapacity(name, class string, segment map[string]string, opts ...capacityOption) *storagev1.CSIStorageCapacity {
	c := &storagev1.CSIStorageCapacity{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("uid-" + name),
			Labels:          map[string]string{DriverNameLabel: driver, ManagedByLabel: DefaultManagedBy},
			OwnerReferences: []metav1.OwnerReference{owner}},
		StorageClassName: class,
		NodeTopology:     NewSegment(segment).Selector(),
		Capacity:         ptrTo(resource.MustParse("1Gi")),
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

func available(q string) capacityOption {
	return func(c *storagev1.CSIStorageCapacity) { c.Capacity = ptrTo(resource.MustParse(q)) }
}

func maxVolumeSize(q string) capacityOption {
	return func(c *storagev1.CSIStorageCapacity) { c.MaximumVolumeSize = ptrTo(resource.MustParse(q)) }
}

func ownerRefs(refs ...metav1.OwnerReference) capacityOption {
	return func(c *storagev1.CSIStorageCapacity) { c.OwnerReferences = refs }
}

func labeled(labels map[string]string) capacityOption {
	return func(c *storagev1.CSIStorageCapacity) { c.Labels = labels }
}

func inNamespace(ns string) capacityOption {
	return func(c *storagev1.CSIStorageCapacity) { c.Namespace = ns }
}

func createdAt(sec int64) capacityOption {
	return func(c *storagev1.CSIStorageCapacity) { c.CreationTimestamp = metav1.Unix(sec, 0) }
}

func selecting(sel *metav1.LabelSelector) capacityOption {
	return func(c *storagev1.CSIStorageCapacity) { c.NodeTopology = sel }
}

// reports builds the driver's answers: class, segment, quantity[,max], ...
type reportEntry struct {
	class   string
	segment map[string]string
	bytes   string // "1Gi" or "1Gi,1Mi" (available, maximum volume size)
}

func reports(entries ...reportEntry) map[Key]Report {
	out := map[Key]Report{}
	for _, e := range entries {
		avail, maxSize, hasMax := strings.Cut(e.bytes, ",")
		r := Report{AvailableBytes: bytesOf(avail)}
		if hasMax {
			r.MaximumVolumeBytes = ptrTo(bytesOf(maxSize))
		}
		out[Key{Class: e.class, Segment: NewSegment(e.segment).ID()}] = r
	}
	return out
}

func bytesOf(q string) int64 {
	v := resource.MustParse(q)
	return v.Value()
}

// describe writes an object as the tests expect it: class, segment, sizes
// and owners.
func describe(obj *storagev1.CSIStorageCapacity) string {
	s := fmt.Sprintf("%s %s %s", obj.StorageClassName, segmentString(obj), quantity(obj.Capacity))
	if obj.MaximumVolumeSize != nil {
		s += " max=" + quantity(obj.MaximumVolumeSize)
	}
	for _, ref := range obj.OwnerReferences {
		s += fmt.Sprintf(" owner=%s/%s", ref.Kind, ref.Name)
		if ref.Controller != nil && *ref.Controller {
			s += "(controller)"
		}
	}
	return s
}

func quantity(q *resource.Quantity) string {
	if q == nil {
		return "<nil>"
	}
	return q.String()
}
