package capacity

import (
	"context"
	"fmt"
	"maps"

	"github.com/container-storage-interface/spec/lib/go/csi"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
)

// sweep derives the segments, plans for all classes and segments, and
// queues every key that needs work: no report yet, or a write. It writes
// nothing itself.
func (c *Controller) sweep(ctx context.Context) error {
	segments, err := c.currentSegments()
	if err != nil {
		return err
	}
	classes, err := c.classes.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list storage classes: %w", err)
	}
	cached, err := c.cachedObjects(nil)
	if err != nil {
		return err
	}

	c.mu.Lock()
	state := State{Segments: segments, Classes: classes, Existing: c.withWritten(cached, nil), Reports: maps.Clone(c.reports)}
	result := Plan(c.policy, state)
	c.segments = make(map[string]Segment, len(segments))
	for _, seg := range segments {
		c.segments[seg.ID()] = seg
	}
	c.desired = make(map[Key]bool, len(result.Desired))
	for _, it := range result.Desired {
		c.desired[it.Key] = true
	}
	for k := range c.reports {
		if !c.desired[k] {
			delete(c.reports, k)
		}
	}
	c.mu.Unlock()

	keys := result.Keys()
	klog.FromContext(ctx).V(3).Info("Planned storage capacity objects", "segments", len(segments), "desired", len(result.Desired),
		"unreported", len(result.Unreported), "create", len(result.Create), "update", len(result.Update), "delete", len(result.Delete))
	for _, k := range keys {
		c.enqueue(item{key: k})
	}
	return nil
}

// currentSegments are the fixed segment, or those the nodes define.
func (c *Controller) currentSegments() ([]Segment, error) {
	if c.fixed != nil {
		return []Segment{*c.fixed}, nil
	}
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	csiNodes, err := c.csiNodes.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list CSINodes: %w", err)
	}
	return Segments(c.policy.DriverName, nodes, csiNodes), nil
}

// sync brings the objects of one key in line with the plan of that key: it
// asks GetCapacity first when the key has no fresh report.
func (c *Controller) sync(ctx context.Context, k Key) error {
	state, err := c.gatherKey(k)
	if err != nil {
		return err
	}
	result := Plan(c.policy, state)
	if len(result.Unreported) > 0 {
		report, err := c.getCapacity(ctx, result.Unreported[0])
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.reports[k] = report
		c.mu.Unlock()
		state.Reports = map[Key]Report{k: report}
		result = Plan(c.policy, state)
	}
	return c.apply(ctx, result)
}

// gatherKey is the planner's input for one key: its segment if the last
// sweep found it, its class if it exists, its objects and its report.
func (c *Controller) gatherKey(k Key) (State, error) {
	var state State
	class, err := c.classes.Get(k.Class)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return State{}, fmt.Errorf("get storage class %q: %w", k.Class, err)
	default:
		state.Classes = []*storagev1.StorageClass{class}
	}
	cached, err := c.cachedObjects(&k)
	if err != nil {
		return State{}, err
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if seg, ok := c.segments[k.Segment]; ok {
		state.Segments = []Segment{seg}
	}
	state.Existing = c.withWritten(cached, &k)
	if report, ok := c.reports[k]; ok {
		state.Reports = map[Key]Report{k: report}
	}
	return state, nil
}

// cachedObjects returns the cached objects of key k, or all of them.
func (c *Controller) cachedObjects(k *Key) ([]*storagev1.CSIStorageCapacity, error) {
	indexer := c.capacities.GetIndexer()
	objs := indexer.List()
	if k != nil {
		var err error
		if objs, err = indexer.ByIndex(byKeyIndex, indexValue(*k)); err != nil {
			return nil, fmt.Errorf("read CSIStorageCapacity cache: %w", err)
		}
	}
	out := make([]*storagev1.CSIStorageCapacity, 0, len(objs))
	for _, obj := range objs {
		if capacity, ok := obj.(*storagev1.CSIStorageCapacity); ok {
			out = append(out, capacity)
		}
	}
	return out, nil
}

// getCapacity asks the driver for the capacity of an item: the class's
// parameters (all of them, as upstream sends them) and the segment as the
// accessible topology.
func (c *Controller) getCapacity(ctx context.Context, it Item) (Report, error) {
	req := &csi.GetCapacityRequest{
		Parameters:         it.Class.Parameters,
		AccessibleTopology: &csi.Topology{Segments: it.Segment.Labels()},
	}
	resp, err := c.csi.GetCapacity(ctx, req)
	if err != nil {
		return Report{}, fmt.Errorf("get capacity of storage class %q in segment %s: %w", it.Class.Name, it.Segment, err)
	}
	report := ReportFrom(resp)
	klog.FromContext(ctx).V(5).Info("Driver reported capacity", "storageClass", it.Class.Name, "segment", it.Segment.String(),
		"availableBytes", report.AvailableBytes, "maximumVolumeBytes", report.MaximumVolumeBytes)
	return report, nil
}
