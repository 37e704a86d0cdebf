package capacity

import (
	"cmp"
	"slices"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The labels that mark the CSIStorageCapacity objects of one controller, as
// upstream sets them. Objects without both (with our values) are never
// touched.
const (
	// DriverNameLabel holds the CSI driver name.
	DriverNameLabel = "csi.storage.k8s.io/drivername"
	// ManagedByLabel holds the managing instance: DefaultManagedBy, or
	// ManagedByForNode's name for one sidecar per node.
	ManagedByLabel = "csi.storage.k8s.io/managed-by"
)

// generateName prefixes the generated names of new objects, as upstream.
const generateName = "csisc-"

// Key identifies one CSIStorageCapacity object the controller keeps: a
// storage class in a topology segment.
type Key struct {
	Class string
	// Segment is the Segment.ID.
	Segment string
}

// keyOf returns the key an existing object stands for. An object whose
// nodeTopology is no segment gets a key of its own that is never desired.
func keyOf(obj *storagev1.CSIStorageCapacity) Key {
	if seg, ok := segmentOf(obj.NodeTopology); ok {
		return Key{Class: obj.StorageClassName, Segment: seg.ID()}
	}
	return Key{Class: obj.StorageClassName, Segment: unmatchablePrefix + obj.Name}
}

// Report is what the driver's GetCapacity answered for one key.
type Report struct {
	AvailableBytes int64
	// MaximumVolumeBytes is nil when the driver did not report it.
	MaximumVolumeBytes *int64
}

// ReportFrom reads a GetCapacity response.
func ReportFrom(resp *csi.GetCapacityResponse) Report {
	r := Report{AvailableBytes: resp.GetAvailableCapacity()}
	if m := resp.GetMaximumVolumeSize(); m != nil {
		v := m.GetValue()
		r.MaximumVolumeBytes = &v
	}
	return r
}

// Policy is what stays the same for one controller: whose objects, where,
// for which classes, owned by what.
type Policy struct {
	// DriverName is the CSI driver: the provisioner of the tracked storage
	// classes and the DriverNameLabel of the objects.
	DriverName string
	// ManagedBy is the ManagedByLabel of the objects.
	ManagedBy string
	// Namespace holds the objects.
	Namespace string
	// Owner is set on new objects, and added to existing ones that lack
	// it; nil leaves objects without an owner (and existing owners alone).
	Owner *metav1.OwnerReference
	// ImmediateBinding tracks classes with volumeBindingMode Immediate
	// too; the scheduler only reads capacity for WaitForFirstConsumer.
	ImmediateBinding bool
}

// Tracks reports whether objects are kept for class: the driver's classes
// that bind late, or all of them with ImmediateBinding.
func (p Policy) Tracks(class *storagev1.StorageClass) bool {
	if class.Provisioner != p.DriverName {
		return false
	}
	immediate := class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingImmediate
	return p.ImmediateBinding || !immediate
}

// Labels are the labels of the objects.
func (p Policy) Labels() map[string]string {
	return map[string]string{DriverNameLabel: p.DriverName, ManagedByLabel: p.ManagedBy}
}

// Manages reports whether obj is one of ours: in our namespace with our
// labels. Others' objects are never changed or deleted, also when they
// describe the same class and segment.
func (p Policy) Manages(obj *storagev1.CSIStorageCapacity) bool {
	return obj.Namespace == p.Namespace &&
		obj.Labels[DriverNameLabel] == p.DriverName &&
		obj.Labels[ManagedByLabel] == p.ManagedBy
}

// State is what the planner decides from, gathered from the caches and the
// driver's answers.
type State struct {
	// Segments are the driver's topology segments (Segments).
	Segments []Segment
	// Classes are the storage classes; those the policy does not track are
	// skipped.
	Classes []*storagev1.StorageClass
	// Existing are the CSIStorageCapacity objects; others' are skipped.
	Existing []*storagev1.CSIStorageCapacity
	// Reports are the driver's latest answers. A key without one is
	// neither created nor updated: GetCapacity has to be asked first.
	Reports map[Key]Report
}

// Item is a desired object: a tracked class in a segment.
type Item struct {
	Key     Key
	Segment Segment
	Class   *storagev1.StorageClass
}

// DeleteReason says why an object goes.
type DeleteReason string

// The reasons for deleting an object, in the order they are checked.
const (
	// ReasonNoSegmentSelector: its nodeTopology is nil or uses
	// matchExpressions, which this controller never writes.
	ReasonNoSegmentSelector DeleteReason = "NodeTopologyIsNoSegment"
	// ReasonClassGone: its storage class does not exist or belongs to
	// another driver.
	ReasonClassGone DeleteReason = "StorageClassGone"
	// ReasonClassNotTracked: its storage class binds immediately and
	// capacity is only tracked for late binding.
	ReasonClassNotTracked DeleteReason = "StorageClassNotTracked"
	// ReasonSegmentGone: no node of the driver has its segment any more.
	ReasonSegmentGone DeleteReason = "SegmentGone"
	// ReasonDuplicate: another object stands for the same class and
	// segment (two creates raced); the oldest is kept.
	ReasonDuplicate DeleteReason = "Duplicate"
)

// Deletion is an object to delete and why.
type Deletion struct {
	Object *storagev1.CSIStorageCapacity
	Reason DeleteReason
}

// Result is the planner's decision.
type Result struct {
	// Desired are the objects that should exist, sorted by key.
	Desired []Item
	// Unreported are the desired items without a report: the controller
	// asks GetCapacity for them, and plans again.
	Unreported []Item
	// Create are new objects (generated names), sorted by key.
	Create []*storagev1.CSIStorageCapacity
	// Update are changed copies of existing objects, sorted by name.
	Update []*storagev1.CSIStorageCapacity
	// Delete are obsolete objects, sorted by name.
	Delete []Deletion
}

// Keys returns the keys the result's writes and unreported items concern,
// each once, sorted.
func (r Result) Keys() []Key {
	var keys []Key
	for _, it := range r.Unreported {
		keys = append(keys, it.Key)
	}
	for _, obj := range r.Create {
		keys = append(keys, keyOf(obj))
	}
	for _, obj := range r.Update {
		keys = append(keys, keyOf(obj))
	}
	for _, d := range r.Delete {
		keys = append(keys, keyOf(d.Object))
	}
	slices.SortFunc(keys, compareKeys)
	return slices.Compact(keys)
}

// Plan decides which objects to create, update and delete: one object per
// tracked class and segment, with the reported capacity and maximum volume
// size and the policy's owner; objects of classes or segments that are gone
// are deleted, and of two objects for the same class and segment the older
// stays. It reads its input and changes nothing.
func Plan(p Policy, s State) Result {
	var r Result
	segmentIDs := make([]string, len(s.Segments))
	knownSegments := make(map[string]bool, len(s.Segments))
	for i, seg := range s.Segments {
		segmentIDs[i] = seg.ID()
		knownSegments[segmentIDs[i]] = true
	}
	desired := make(map[Key]bool, len(s.Classes)*len(s.Segments))
	classes := make(map[string]*storagev1.StorageClass, len(s.Classes))
	for _, class := range s.Classes {
		classes[class.Name] = class
		if !p.Tracks(class) {
			continue
		}
		for i, seg := range s.Segments {
			it := Item{Key: Key{Class: class.Name, Segment: segmentIDs[i]}, Segment: seg, Class: class}
			if !desired[it.Key] {
				desired[it.Key] = true
				r.Desired = append(r.Desired, it)
			}
		}
	}
	slices.SortFunc(r.Desired, func(a, b Item) int { return compareKeys(a.Key, b.Key) })

	existing := make(map[Key][]*storagev1.CSIStorageCapacity, len(s.Existing))
	for _, obj := range s.Existing {
		if p.Manages(obj) {
			k := keyOf(obj)
			existing[k] = append(existing[k], obj)
		}
	}

	for _, it := range r.Desired {
		objs := existing[it.Key]
		delete(existing, it.Key)
		slices.SortFunc(objs, olderFirst)
		var keep *storagev1.CSIStorageCapacity
		if len(objs) > 0 {
			keep = objs[0]
			for _, dup := range objs[1:] {
				r.Delete = append(r.Delete, Deletion{Object: dup, Reason: ReasonDuplicate})
			}
		}
		report, ok := s.Reports[it.Key]
		switch {
		case !ok:
			r.Unreported = append(r.Unreported, it)
		case keep == nil:
			r.Create = append(r.Create, newObject(p, it, report))
		default:
			if updated := updateObject(p, keep, report); updated != nil {
				r.Update = append(r.Update, updated)
			}
		}
	}
	for k, objs := range existing {
		reason := obsoleteReason(p, k, classes, knownSegments)
		for _, obj := range objs {
			r.Delete = append(r.Delete, Deletion{Object: obj, Reason: reason})
		}
	}
	slices.SortFunc(r.Update, byName)
	slices.SortFunc(r.Delete, func(a, b Deletion) int { return byName(a.Object, b.Object) })
	return r
}

// obsoleteReason says why no object should exist for k.
func obsoleteReason(p Policy, k Key, classes map[string]*storagev1.StorageClass, segments map[string]bool) DeleteReason {
	class := classes[k.Class]
	switch {
	case strings.HasPrefix(k.Segment, unmatchablePrefix):
		return ReasonNoSegmentSelector
	case class == nil || class.Provisioner != p.DriverName:
		return ReasonClassGone
	case !p.Tracks(class):
		return ReasonClassNotTracked
	case !segments[k.Segment]:
		return ReasonSegmentGone
	}
	// Not reached: a tracked class in a known segment is desired.
	return ReasonSegmentGone
}

// newObject is the object for a desired item.
func newObject(p Policy, it Item, report Report) *storagev1.CSIStorageCapacity {
	obj := &storagev1.CSIStorageCapacity{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: generateName,
			Namespace:    p.Namespace,
			Labels:       p.Labels(),
		},
		StorageClassName: it.Class.Name,
		NodeTopology:     it.Segment.Selector(),
	}
	if p.Owner != nil {
		obj.OwnerReferences = []metav1.OwnerReference{*p.Owner}
	}
	setReport(obj, report)
	return obj
}

// updateObject returns a changed copy of obj when its sizes differ from the
// report or it lacks the policy's owner, and nil when it is up to date.
func updateObject(p Policy, obj *storagev1.CSIStorageCapacity, report Report) *storagev1.CSIStorageCapacity {
	needsOwner := p.Owner != nil && !ownedBy(obj, p.Owner)
	if !needsOwner && sameBytes(obj.Capacity, &report.AvailableBytes) && sameBytes(obj.MaximumVolumeSize, report.MaximumVolumeBytes) {
		return nil
	}
	updated := obj.DeepCopy()
	setReport(updated, report)
	if needsOwner {
		// One controller reference at most (the API rejects more): a stale
		// one, e.g. of an earlier deployment, is replaced.
		refs := updated.OwnerReferences[:0]
		for _, ref := range updated.OwnerReferences {
			if ref.Controller == nil || !*ref.Controller {
				refs = append(refs, ref)
			}
		}
		updated.OwnerReferences = append(refs, *p.Owner)
	}
	return updated
}

func setReport(obj *storagev1.CSIStorageCapacity, report Report) {
	obj.Capacity = resource.NewQuantity(report.AvailableBytes, resource.BinarySI)
	obj.MaximumVolumeSize = nil
	if report.MaximumVolumeBytes != nil {
		obj.MaximumVolumeSize = resource.NewQuantity(*report.MaximumVolumeBytes, resource.BinarySI)
	}
}

// ownedBy reports whether owner controls obj, by UID as upstream compares.
func ownedBy(obj *storagev1.CSIStorageCapacity, owner *metav1.OwnerReference) bool {
	for _, ref := range obj.OwnerReferences {
		if ref.Controller != nil && *ref.Controller && ref.UID == owner.UID {
			return true
		}
	}
	return false
}

// sameBytes compares a quantity with a byte count; nil equals only nil.
func sameBytes(q *resource.Quantity, bytes *int64) bool {
	if q == nil || bytes == nil {
		return q == nil && bytes == nil
	}
	return q.Value() == *bytes
}

func compareKeys(a, b Key) int {
	return cmp.Or(strings.Compare(a.Class, b.Class), strings.Compare(a.Segment, b.Segment))
}

func byName(a, b *storagev1.CSIStorageCapacity) int { return strings.Compare(a.Name, b.Name) }

// olderFirst orders by creation, then name: the object kept of duplicates is
// the one that consumers have seen longest.
func olderFirst(a, b *storagev1.CSIStorageCapacity) int {
	return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), byName(a, b))
}
